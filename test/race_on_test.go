//go:build race

package test

// raceBuild: the tests run under the race detector (go test -race), so
// TestMain builds the gateway and the CLI with -race too.
const raceBuild = true
