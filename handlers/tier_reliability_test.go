//go:build reliability

package handlers_test

// raceRounds under make reliability: the hundred rounds security finding 3 asks for.
const raceRounds = 100

// probeSkips: make reliability sweeps with every principal of TestProbe_NoLeaks.
var probeSkips = map[string]bool{}

// wholeFinishes is how many finishes of a webhook's deliveries make reliability reads
// them during (TestWebhook_DeliveriesReadWhole).
const wholeFinishes = 1000
