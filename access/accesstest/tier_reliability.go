//go:build reliability

package accesstest

// httpSkips: make reliability runs every principal of the matrix over HTTP.
var httpSkips = map[string]bool{}

// ServiceRepeatsHTTP: make reliability decides every cell in the service tier, the
// HTTP tier's too.
const ServiceRepeatsHTTP = true
