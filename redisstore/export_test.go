package redisstore

// PartitionOf exposes the index partition of a workflow id to the tests.
var PartitionOf = partition
