package neo4jstore

import (
	"context"
	"sync/atomic"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/cypher"
	"github.com/memgate/memgate/graph"
)

// serverVersionQuery reads the Neo4j's version, which the schema's migrations that
// only some versions accept are judged by (cypher.Migration).
const serverVersionQuery = "server_version"

// server is what the store knows of the Neo4j it talks to.
type server struct {
	version atomic.Value
}

// ServerVersion is the version of the Neo4j the store talks to, e.g. 5.26.30, read
// once.
func (db *DB) ServerVersion(ctx context.Context) (string, error) {
	if v, _ := db.server.version.Load().(string); v != "" {
		return v, nil
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, serverVersionQuery, nil)
	if err != nil {
		return "", err
	}
	if len(records) == 0 {
		return "", graph.Errorf(graph.EINTERNAL, "neo4j did not name its version")
	}
	v, _ := records[0].Values[0].(string)
	if _, ok := cypher.ParseVersion(v); !ok {
		return "", graph.Errorf(graph.EINTERNAL, "neo4j names its version %q", v)
	}
	db.server.version.Store(v)
	return v, nil
}
