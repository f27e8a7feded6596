// Package extract is the ingestion pipeline: the LLM client seam (go-openai), the
// offline heuristic extractor, embedders, entity and fact resolution, and the worker
// loop that claims queued episodes. It imports graph only.
package extract
