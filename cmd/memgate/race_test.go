//go:build race

package main

// raceEnabled: the tests run under -race, and so does the memgate binary they start.
const raceEnabled = true
