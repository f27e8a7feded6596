//go:build reliability

package main

// reliability is true under make reliability (-tags reliability): the load, outage,
// restart and import tests run at full size.
const reliability = true
