//go:build reliability

package handlers_test

import "time"

// raceRounds under make reliability: the hundred rounds security finding 3 asks for.
const raceRounds = 100

// probeSkips: make reliability sweeps with every principal of TestProbe_NoLeaks.
var probeSkips = map[string]bool{}

// wholeReadsFor is how long make reliability reads a webhook's deliveries while they are being
// finished over and over (TestWebhook_DeliveriesReadWhole).
const wholeReadsFor = 30 * time.Second
