package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// ImportOptions says how to import a file.
type ImportOptions struct {
	Path      string // .jsonl (one memory per line) or .csv (a header row, then one per row)
	BatchSize int    // memories per request (at most memory.batch_max_items of the server)
	Workers   int    // requests in flight
	Rejects   io.Writer
	// Retry is how long a batch that met a transport error or a 5xx is sent again,
	// with its key (so it is stored once), before the run stops; 0: never.
	Retry time.Duration
	// Retrying, when set, hears each error a batch is sent again after (from the
	// workers, several at once).
	Retrying func(err error)
	// Progress, when set, hears how many lines are settled (accepted, duplicate or
	// rejected) out of the total, after every batch; never from two goroutines at once.
	Progress func(settled, total int)
}

// Summary is what an import did.
type Summary struct {
	Lines      int           // memories in the file
	Accepted   int           // stored by this run
	Duplicates int           // stored by an earlier run: the server replayed its answer
	Rejected   int           // refused, each written to the rejects file with the reason
	Elapsed    time.Duration // for the rate
	// IDs are the memories of the file that are stored (Accepted and Duplicates), for
	// Extraction to follow.
	IDs []string
}

// ErrUnreadable is an import whose file cannot be read or is not JSON Lines or CSV:
// nothing was sent, and running it again will not help.
var ErrUnreadable = errors.New("the file cannot be imported")

// MaxLine is the longest line of a JSON Lines file import sends; a longer one is
// rejected as one line.
const MaxLine = 16 << 20

// line is one memory of the file and where it came from.
type line struct {
	number int // 1-based line (JSON Lines) or record (CSV, the header is 1)
	memory Memory
	err    error // why the line cannot be sent
}

// Import sends a file's memories in batches, several at once. Each batch's
// idempotency key is derived from the file's content and the batch's first line, so a
// rerun of the same file (after an interruption, or to be sure) stores every line
// once: what landed before is answered as a duplicate. It stops early when ctx ends;
// the summary covers the batches that finished.
func Import(ctx context.Context, c *Client, o ImportOptions) (Summary, error) {
	start := time.Now()
	data, err := os.ReadFile(o.Path)
	if err != nil {
		return Summary{}, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	lines, err := parse(o.Path, data)
	if err != nil {
		return Summary{}, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	sum := sha256.Sum256(data)
	fileKey := "import-" + hex.EncodeToString(sum[:12])
	s := Summary{Lines: len(lines)}
	var mu sync.Mutex
	settle := func(l line, res *BatchResult, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			s.Rejected++
			reject(o.Rejects, l.number, err)
		case res.Error != nil:
			s.Rejected++
			reject(o.Rejects, l.number, res.Error)
		case res.Accepted != nil && res.Replayed:
			s.Duplicates++
			s.IDs = append(s.IDs, res.ID)
		default:
			s.Accepted++
			if res.Accepted != nil {
				s.IDs = append(s.IDs, res.ID)
			}
		}
	}
	progress := func() { // under the lock: the callback never runs twice at once
		if o.Progress != nil {
			mu.Lock()
			defer mu.Unlock()
			o.Progress(s.Accepted+s.Duplicates+s.Rejected, s.Lines)
		}
	}

	batches := make(chan []line)
	var wg sync.WaitGroup
	var fatal error
	var once sync.Once
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	for w := 0; w < max(1, o.Workers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range batches {
				var items []Memory
				var sent []line
				for _, l := range batch {
					if l.err != nil {
						settle(l, nil, l.err)
						continue
					}
					items, sent = append(items, l.memory), append(sent, l)
				}
				if len(items) > 0 {
					key := fmt.Sprintf("%s-%d", fileKey, batch[0].number)
					var results []BatchResult
					var last error
					err := resend(250*time.Millisecond, o.Retry).Retry(ctx, func() error {
						if last != nil && o.Retrying != nil {
							o.Retrying(last) // heard as the batch is sent again, after the wait
						}
						var err error
						results, err = c.AddBatch(ctx, items, key)
						last = err
						return err
					})
					var apiErr *Error
					switch {
					case errors.As(err, &apiErr) && apiErr.Status < 500 && apiErr.Status != 429:
						for _, l := range sent {
							settle(l, nil, err) // the whole batch was refused, e.g. a bad requester
						}
					case err != nil:
						once.Do(func() { fatal = err; stop() }) // the service is unreachable: stop, rerun later
						continue
					default:
						for _, r := range results {
							if r.Index >= 0 && r.Index < len(sent) {
								settle(sent[r.Index], &r, nil)
							}
						}
					}
				}
				progress()
			}
		}()
	}
	size := max(1, o.BatchSize)
send:
	for lo := 0; lo < len(lines); lo += size {
		select {
		case batches <- lines[lo:min(lo+size, len(lines))]:
		case <-ctx.Done():
			break send
		}
	}
	close(batches)
	wg.Wait()
	s.Elapsed = time.Since(start)
	if fatal == nil {
		fatal = ctx.Err()
	}
	return s, fatal
}

// RejectsFile is where an import writes the lines it rejects: created on the first
// reject only (a run that rejects nothing leaves no file behind, and a file that
// cannot be read creates none), never through a symlink or into anything but a
// regular file; an earlier run's file is replaced.
type RejectsFile struct {
	Path string
	f    *os.File
	err  error
}

func (r *RejectsFile) Write(p []byte) (int, error) {
	if r.f == nil && r.err == nil {
		r.f, r.err = createRejects(r.Path)
	}
	if r.err != nil {
		return 0, r.err
	}
	return r.f.Write(p)
}

// Close closes the file, if one was created, and reports the first error writing it.
func (r *RejectsFile) Close() error {
	if r.f != nil {
		if err := r.f.Close(); r.err == nil {
			r.err = err
		}
	}
	return r.err
}

func createRejects(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s exists and is not a regular file (a symlink?): rejects not written", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	// O_EXCL: a file or symlink put there since is refused, never followed.
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

func reject(w io.Writer, number int, err error) {
	if w == nil {
		return
	}
	b, _ := json.Marshal(map[string]any{"line": number, "error": err.Error()})
	fmt.Fprintf(w, "%s\n", b)
}

// importLine is one line of a JSON Lines file: a memory as POST /v1/memories takes
// it, whose text may be given as content (a plain text memory) instead of messages
// (one of the two).
type importLine struct {
	Memory
	Content string `json:"content"`
}

func (l importLine) memory() (Memory, error) {
	m := l.Memory
	switch {
	case l.Content != "" && l.Messages != nil:
		return m, errors.New("a line has content or messages, not both")
	case l.Content != "":
		m.Messages = l.Content
	case l.Messages == nil:
		return m, errors.New("a line needs content or messages")
	}
	return m, nil
}

// parse reads the memories of a .jsonl or .csv file. A line that cannot be read is
// kept with its error, to be reported, not sent.
func parse(path string, data []byte) ([]line, error) {
	switch {
	case strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".ndjson"):
		var out []line
		for n, rest := 1, data; len(rest) > 0; n++ {
			raw := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				raw, rest = rest[:i], rest[i+1:]
			} else {
				rest = nil
			}
			text := bytes.TrimSpace(raw)
			if len(text) == 0 {
				continue
			}
			l := line{number: n}
			if len(text) > MaxLine {
				l.err = fmt.Errorf("the line is %d bytes, over the %d a memory may have", len(text), MaxLine)
				out = append(out, l)
				continue
			}
			// A line of memgate export: a memory written again as it was written; a
			// fact is left out, since extracting the memories makes it again.
			var exported map[string]json.RawMessage
			if json.Unmarshal(text, &exported) == nil && len(exported) == 1 {
				if _, fact := exported["fact"]; fact {
					continue
				}
				if m, ok := exported["memory"]; ok {
					var stored Stored
					if err := json.Unmarshal(m, &stored); err != nil {
						l.err = fmt.Errorf("not an exported memory: %v", err)
					} else {
						l.memory = stored.Memory()
					}
					out = append(out, l)
					continue
				}
			}
			var il importLine
			dec := json.NewDecoder(bytes.NewReader(text))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&il); err != nil {
				l.err = fmt.Errorf("not a memory: %v", err)
			} else {
				l.memory, l.err = il.memory()
			}
			out = append(out, l)
		}
		return out, nil
	case strings.HasSuffix(path, ".csv"):
		r := csv.NewReader(strings.NewReader(string(data)))
		r.FieldsPerRecord = -1
		records, err := r.ReadAll()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(records) == 0 {
			return nil, nil
		}
		col := map[string]int{}
		for i, h := range records[0] {
			col[strings.TrimSpace(h)] = i
		}
		if _, ok := col["agent_id"]; !ok {
			return nil, fmt.Errorf("%s: the header row needs agent_id and content (visibility, team, reference_time, metadata optional)", path)
		}
		if _, ok := col["content"]; !ok {
			return nil, fmt.Errorf("%s: the header row needs agent_id and content (visibility, team, reference_time, metadata optional)", path)
		}
		var out []line
		for i, rec := range records[1:] {
			get := func(name string) string {
				if j, ok := col[name]; ok && j < len(rec) {
					return rec[j]
				}
				return ""
			}
			l := line{number: i + 2}
			il := importLine{Memory: Memory{AgentID: get("agent_id"), Visibility: get("visibility"), Team: get("team")}, Content: get("content")}
			if t := get("reference_time"); t != "" {
				rt, err := time.Parse(time.RFC3339, t)
				if err != nil {
					l.err = fmt.Errorf("reference_time is not RFC 3339: %q", t)
				}
				il.ReferenceTime = &rt
			}
			if md := get("metadata"); md != "" && l.err == nil {
				if err := json.Unmarshal([]byte(md), &il.Metadata); err != nil {
					l.err = fmt.Errorf("metadata is not a JSON object")
				}
			}
			if l.err == nil {
				l.memory, l.err = il.memory()
			}
			out = append(out, l)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: import reads .jsonl (or .ndjson) and .csv files", path)
}

// Export writes an agent's memories and facts that the client's requester may see to
// w, one JSON object per line, newest first: {"memory": ...} lines, then {"fact": ...}
// lines (every fact, current or not). It returns how many of each.
func Export(ctx context.Context, c *Client, agentID string, w io.Writer) (memories, facts int, err error) {
	enc := json.NewEncoder(w)
	for cursor := ""; ; {
		page, err := c.List(ctx, agentID, "", cursor, 100)
		if err != nil {
			return memories, facts, err
		}
		for _, m := range page.Items {
			if err := enc.Encode(map[string]any{"memory": m}); err != nil {
				return memories, facts, err
			}
			memories++
		}
		if cursor = page.NextCursor; !page.HasMore || cursor == "" {
			break
		}
	}
	for cursor := ""; ; {
		page, err := c.Facts(ctx, agentID, cursor, 100)
		if err != nil {
			return memories, facts, err
		}
		for _, f := range page.Items {
			if err := enc.Encode(map[string]any{"fact": f}); err != nil {
				return memories, facts, err
			}
			facts++
		}
		if cursor = page.NextCursor; !page.HasMore || cursor == "" {
			return memories, facts, nil
		}
	}
}
