package graph

import "context"

// Consistency lets a client read its own writes through any replica of the service
// or of the database: each write answers a token naming what the deployment had
// committed once it was done, and a request that sends the token back reads at least
// that fresh, waiting if it must until the database it reads has caught up.
type Consistency interface {
	// Token names every write this process has committed so far; opaque to clients.
	Token(ctx context.Context) (string, error)
	// After returns ctx such that every read made with it sees at least the writes
	// token names. EINVALID when the token is malformed or was not made by this
	// deployment.
	After(ctx context.Context, token string) (context.Context, error)
}
