//go:build !reliability

package main

// reliability is false in make test: the load, outage, restart and import tests run
// at sizes that cover their behaviour in seconds. make reliability builds the tests
// with -tags reliability: the same tests at full size, and the soak.
const reliability = false
