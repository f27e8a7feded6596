// Nothing to read: a read transaction started after the bookmarks it was given ends
// with one bookmark that names them all (neo4jstore/consistency.go).
RETURN 1
