package handlers

import _ "embed"

// openAPI is the OpenAPI 3.1 description of every route, served at /openapi.json.
// TestOpenAPI fails when a route and the document disagree.
//
//go:embed openapi.json
var openAPI []byte
