package graph

import "context"

// Consistency lets a client read its own writes through any replica of the service
// or of the database: each write answers a token naming what the deployment had
// committed once it was done, and a request that sends the token back reads at least
// that fresh, waiting if it must until the database it reads has caught up.
type Consistency interface {
	// Token names every write this process has committed so far, for scope (the
	// organization and requester of the request it answers); opaque to clients, and
	// telling them nothing of the database.
	Token(ctx context.Context, scope string) (string, error)
	// After returns ctx such that every read made with it sees at least the writes
	// token names. EINVALID when the token is malformed, was not made by this
	// deployment, or was made for another scope.
	After(ctx context.Context, token, scope string) (context.Context, error)
}
