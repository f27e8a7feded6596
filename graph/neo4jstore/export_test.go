package neo4jstore

import (
	"context"

	"github.com/google/uuid"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Test-only access to the database, for asserting what the schema enforces.

func (db *DB) IndexNames(ctx context.Context) (map[string]bool, error) {
	res, err := neo4j.ExecuteQuery(ctx, db.driver, "SHOW INDEXES YIELD name RETURN name", nil,
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(db.database))
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, r := range res.Records {
		name, _ := r.Get("name")
		names[name.(string)] = true
	}
	return names, nil
}

func (db *DB) CreateTwoEntitiesWithOneUUID(ctx context.Context) error {
	id := uuid.NewString()
	_, err := neo4j.ExecuteQuery(ctx, db.driver,
		"CREATE (:Entity {uuid: $uuid, group_id: 'test-unique'}) CREATE (:Entity {uuid: $uuid, group_id: 'test-unique'})",
		map[string]any{"uuid": id}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(db.database))
	if err != nil {
		return db.storeError("test_unique", err)
	}
	return nil
}
