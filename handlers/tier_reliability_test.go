//go:build reliability

package handlers_test

import "time"

// raceRounds under make reliability: the hundred rounds security finding 3 asks for.
const raceRounds = 100

// httpMatrixSkips: make reliability runs every principal of the matrix over HTTP.
var httpMatrixSkips = map[string]bool{}

// wholeReadsFor is how long make reliability reads a webhook's deliveries while they are being
// finished over and over (TestWebhook_DeliveriesReadWhole).
const wholeReadsFor = 30 * time.Second
