//go:build !race

package test

// raceBuild: the tests run without the race detector.
const raceBuild = false
