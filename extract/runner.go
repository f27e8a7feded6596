package extract

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/batch"
)

// Metrics are the pipeline's counters, read by /metrics.
type Metrics struct {
	Processed        atomic.Int64 // episodes done
	Failed           atomic.Int64 // episodes failed for good
	Retried          atomic.Int64 // attempts that will be retried
	Claimed          atomic.Int64 // episodes leased by this process's claims
	ClaimConflicts   atomic.Int64 // episodes a claim chose but found taken by another worker when it locked them
	LeasesLost       atomic.Int64 // attempts cut short or refused at their save: another worker had the episode
	ProcessingNano   atomic.Int64 // total time of successful attempts
	ChatCalls        atomic.Int64
	EmbeddingCalls   atomic.Int64
	LLMErrors        sync.Map // kind -> *atomic.Int64
	ChatPromptTokens atomic.Int64
	ChatOutputTokens atomic.Int64
	EmbeddingTokens  atomic.Int64
	Drops            sync.Map // "what/reason" -> *atomic.Int64: extraction output dropped by Clean
}

// Dropped counts one entity or fact (what) Clean dropped for reason.
func (m *Metrics) Dropped(what, reason string) {
	v, _ := m.Drops.LoadOrStore(what+"/"+reason, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// LLMError counts one failed LLM call of kind (rate_limited, server, timeout,
// malformed, ...).
func (m *Metrics) LLMError(kind string) {
	v, _ := m.LLMErrors.LoadOrStore(kind, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// Runner claims queued episodes and processes them with Workers goroutines. Several
// runners (in one process or many) share one queue safely.
type Runner struct {
	Queue       graph.Queue
	Extractor   Extractor
	Resolver    *Resolver
	Types       []EntityType // the labels entities may get, with their attributes
	EdgeTypes   []EdgeType   // the typed relations facts may have
	Workers     int
	Lease       time.Duration
	MaxAttempts int
	Backoff     time.Duration // first retry delay; doubles per attempt, with jitter, at most 5 minutes
	Poll        time.Duration // how often an idle claimer looks for work queued by other processes (Queue.Queued wakes it for its own)
	Scope       string        // group_id prefix to work on; "" for every space
	Log         *slog.Logger
	Metrics     *Metrics
	// Tracer makes a span of every attempt at an episode, linked to the request that
	// queued it (trace.go); nil: tracing is off.
	Tracer trace.TracerProvider

	id       string
	saves    *batch.Batcher[*graph.GraphWrite, error]
	attempts atomic.Int64 // numbers this runner's attempts, for their costs' ids
	tracer   trace.Tracer
	dueMu    sync.Mutex
	due      []time.Time // when the retries this runner queued come due, earliest first
}

// maxBatch bounds how many episodes one save transaction or one read holds, and
// batchTimeout how long one may take, retries included.
const (
	maxBatch     = 32
	batchTimeout = 30 * time.Second
)

// ContextEpisodes is how many earlier episodes of the space an extraction sees.
const ContextEpisodes = 4

// Run processes episodes until ctx ends, then returns once every worker has stopped.
// One claimer leases episodes in one query for every free place, and hands them out,
// so workers never race each other for the same episode. There are twice as many
// places as workers: the claimer leases the next episodes while the workers are busy,
// so a worker that finishes finds its next episode waiting instead of waiting for a
// claim. A worker extracts and resolves, hands the result to the group commit, and
// goes on to its next episode; its place goes to the claimer, and the episode keeps its
// lease (so its space's next episode stays unclaimable) until the commit has saved it.
// A commit costs nearly as much for one episode as for sixteen (index upkeep at
// commit), so workers waiting on it would make commits small and leave the LLM idle;
// at most maxBatch episodes wait for commits. When ctx ends, the episodes in flight or
// waiting are handed back to the queue at once; one this process dies with keeps its
// lease until it expires.
func (r *Runner) Run(ctx context.Context) {
	r.id = workerID()
	r.tracer = tracerOf(r.Tracer)
	// Group commit: one transaction saves the results of every worker waiting.
	r.saves = batch.New(maxBatch, batchTimeout, func(ctx context.Context, ws []*graph.GraphWrite) ([]error, error) {
		return r.Queue.Complete(ctx, r.id, ws)
	})
	// One read serves the neighbourhoods of every worker resolving at the same time.
	reads := batch.New(maxBatch, batchTimeout, func(ctx context.Context, qs []graph.NeighbourhoodQuery) ([]graph.Neighbourhood, error) {
		return r.Resolver.Know.Neighbourhoods(ctx, qs, maxCandidates)
	})
	r.Resolver.lookup = reads.Call
	defer func() { // the groups under way end before Run returns
		ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
		defer cancel()
		_ = r.saves.Close(ctx)
		_ = reads.Close(ctx)
	}()
	places := 2 * r.Workers
	jobs := make(chan job, places)
	free := make(chan struct{}, places)
	hungry := make(chan struct{}, 1)            // a worker took the last leased episode
	committing := make(chan struct{}, maxBatch) // episodes handed to the group commit, not yet saved
	for range places {
		free <- struct{}{}
	}
	var wg, saving sync.WaitGroup
	for i := 0; i < r.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if len(jobs) == 0 {
					select {
					case hungry <- struct{}{}:
					default:
					}
				}
				j.start = time.Now()
				j.ctx, j.meter = withMeter(j.ctx) // what this attempt's calls cost
				j.attempt = fmt.Sprintf("%s#%d", r.id, r.attempts.Add(1))
				j.ctx, j.span = r.startIngest(j.ctx, j.Episode)
				w, err := r.prepare(ctx, j)
				if err != nil {
					r.finish(ctx, j, err)
					free <- struct{}{}
					continue
				}
				committing <- struct{}{}
				free <- struct{}{}
				w.Cost = j.spent() // saved with the write
				saving.Add(1)
				go func() {
					defer saving.Done()
					r.finish(ctx, j, r.save(j.ctx, w))
					<-committing
				}()
			}
		}()
	}
	r.claim(ctx, jobs, free, hungry)
	close(jobs)
	wg.Wait()
	saving.Wait()
}

// job is a claimed episode whose lease is being kept alive until ctx ends, when its
// attempt began, and what the attempt's calls cost so far.
type job struct {
	graph.Claimed
	ctx     context.Context
	cancel  context.CancelCauseFunc
	start   time.Time
	meter   *meter
	attempt string     // the attempt's id: the store adds its cost once
	span    trace.Span // the attempt's (startIngest)
}

// spent is what the attempt has cost up to now: its calls, and its time since it began.
func (j job) spent() graph.Cost {
	c := j.meter.total()
	c.Seconds, c.Attempt = time.Since(j.start).Seconds(), j.attempt
	return c
}

func workerID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// claim leases episodes for free places until ctx ends. The lease of each is kept
// alive from the claim on, also while it waits for a worker. A claim costs about the
// same for one place as for many (it reads the unfinished episodes of the scope, see
// episode_claim), so while leased episodes still wait for workers the claimer lets
// free places add up to one per worker and claims for them at once; when the workers
// run out (hungry) it claims for whatever is free.
func (r *Runner) claim(ctx context.Context, jobs chan<- job, free, hungry <-chan struct{}) {
	wait := r.Poll
	n := 0 // free places
	for {
		for more := true; more; {
			select {
			case <-free:
				n++
			default:
				more = false
			}
		}
		if n == 0 || (n < r.Workers && len(jobs) > 0) {
			select {
			case <-ctx.Done():
				return
			case <-free:
				n++
			case <-hungry:
			}
			continue
		}
		// A claim is not cut short by shutdown: one cut after its transaction committed
		// would leave its episodes leased to no one until the lease expires. What it
		// claimed once the end began goes back at once.
		queued := r.Queue.Queued(r.Scope) // taken before the claim, so nothing queued after its read is missed
		claimed := time.Now()
		claimCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		eps, taken, err := r.Queue.Claim(claimCtx, r.id, r.Scope, r.Lease, n, ContextEpisodes)
		cancel()
		r.Metrics.Claimed.Add(int64(len(eps)))
		r.Metrics.ClaimConflicts.Add(int64(taken))
		if ctx.Err() != nil {
			for _, ep := range eps {
				r.giveBack(ctx, ep.Episode, graph.Cost{}) // no attempt began
			}
			return
		}
		if err != nil {
			r.Log.Warn("claiming episodes", "worker", r.id, "error", err.Error(), "retry_in", wait.String())
		}
		for _, ep := range eps {
			jctx, cancel := context.WithCancelCause(ctx)
			go r.keepLease(jctx, cancel, ep.Episode.UUID)
			jobs <- job{Claimed: ep, ctx: jctx, cancel: cancel}
		}
		n -= len(eps)
		// Candidates another process took first do not mean the queue is empty: claim
		// again at once rather than after a poll.
		if len(eps) > 0 || taken > 0 {
			wait = r.Poll
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.nextLook(wait, claimed)):
		case <-queued:
			// Every idle claimer of the process wakes at once: a random pause of up to
			// wakeSpread keeps two of one scope from reading the same candidates together.
			select {
			case <-ctx.Done():
				return
			case <-time.After(mrand.N(wakeSpread)):
			}
		}
		if err != nil { // the store is down: back off up to 10 s instead of polling hard
			wait = min(2*wait, 10*time.Second)
		} else {
			wait = r.Poll
		}
	}
}

// retryDue records that an episode this runner hands back is due again at t: the idle
// claimer looks then, not at its next poll, so a retry waits its backoff, not the
// poll on top (the release's commit wakes the claimer, which then sleeps until t).
func (r *Runner) retryDue(t time.Time) {
	r.dueMu.Lock()
	defer r.dueMu.Unlock()
	i, _ := slices.BinarySearchFunc(r.due, t, time.Time.Compare)
	r.due = slices.Insert(r.due, i, t)
}

// nextLook is how long the idle claimer waits before it claims again: poll, or less
// when a retry this runner queued comes due sooner. The retries due by the claim that
// began at claimed are forgotten: it has read them.
func (r *Runner) nextLook(poll time.Duration, claimed time.Time) time.Duration {
	r.dueMu.Lock()
	defer r.dueMu.Unlock()
	for len(r.due) > 0 && !r.due[0].After(claimed) {
		r.due = r.due[1:]
	}
	if len(r.due) == 0 {
		return poll
	}
	return max(min(time.Until(r.due[0]), poll), 0)
}

// wakeSpread bounds the random pause of a claimer woken by its process's write.
const wakeSpread = 20 * time.Millisecond

// prepare extracts and resolves a claimed episode: everything of an attempt but the
// save.
func (r *Runner) prepare(ctx context.Context, j job) (*graph.GraphWrite, error) {
	if ctx.Err() != nil { // shutting down before the attempt began
		return nil, ctx.Err()
	}
	// The deployment's types, or the fewer its space's owner chose.
	ont := graph.Ontology{EntityTypes: r.Types, EdgeTypes: r.EdgeTypes}.Within(j.Types)
	x, direct := graph.Direct(j.Episode) // a fact stated directly is read as given
	var before *graph.Episode
	if !direct {
		before = graph.TurnBefore(j.Episode, j.Previous)
		ctx, end := r.phase(j.ctx, "extract")
		if j.Types != nil {
			ctx = WithOntology(ctx, ont)
		}
		var err error
		x, err = r.Extractor.Extract(ctx, j.Episode, j.Previous)
		end(err)
		if err != nil {
			return nil, fmt.Errorf("extraction: %w", err)
		}
		AsSpeaker(x, j.Episode.Content)
	}
	clean, drops := CleanTyped(x, ont)
	if !direct {
		said, _ := Retained(j.Episode.Content) // what its speakers took back is not stated
		texts := []string{said}
		for _, p := range j.Previous {
			texts = append(texts, p.Content)
		}
		var ungrounded []Drop
		clean, ungrounded = Ground(clean, texts...)
		drops = append(drops, ungrounded...)
	}
	for _, d := range drops {
		r.Metrics.Dropped(d.What, d.Reason)
		r.Log.Debug("extraction output dropped", "episode", j.Episode.UUID, "what", d.What, "reason", d.Reason, "text", d.Text)
	}
	resolveCtx, end := r.phase(j.ctx, "resolve")
	w, err := r.Resolver.Resolve(resolveCtx, j.Episode, clean, before)
	end(err)
	if err != nil {
		return nil, fmt.Errorf("resolution: %w", err)
	}
	if !direct {
		for _, p := range j.Previous {
			w.Context = append(w.Context, p.UUID)
		}
	}
	return w, nil
}

// save writes a resolved episode in the next group commit and marks it done.
func (r *Runner) save(ctx context.Context, w *graph.GraphWrite) (err error) {
	ctx, end := r.phase(ctx, "save")
	defer func() { end(err) }()
	saved, err := r.saves.Call(ctx, w)
	if err != nil {
		return err
	}
	return saved
}

// finish records the outcome of an attempt: done, handed back (shutting down), lost
// to another worker, or released to be retried or failed. What a failed attempt cost
// is written with its outcome (handed back or released; a done one's went with its
// save, and so did one whose save found the lease lost). An attempt cut short by the
// loss of its lease before its save writes nothing: the episode is another worker's.
func (r *Runner) finish(ctx context.Context, j job, err error) {
	ep := j.Episode
	defer j.cancel(nil)
	switch {
	case err == nil:
		took := time.Since(j.start)
		r.Metrics.Processed.Add(1)
		r.Metrics.ProcessingNano.Add(int64(took))
		r.Log.InfoContext(j.ctx, "episode processed", "episode", ep.UUID, "group_id", ep.GroupID, "attempt", ep.Attempts,
			"ms", took.Milliseconds())
		endIngest(j.span, "done", "")
		return
	case ctx.Err() != nil:
		// Shutting down: hand the episode back at once, so another process need not
		// wait for the lease to expire (a rolling restart loses no time).
		r.giveBack(j.ctx, ep, j.spent())
		endIngest(j.span, "returned", "")
		return
	case context.Cause(j.ctx) != nil || graph.ErrorCode(err) == graph.ECONFLICT:
		r.Metrics.LeasesLost.Add(1)
		r.Log.WarnContext(j.ctx, "lease lost; another worker has the episode", "episode", ep.UUID)
		endIngest(j.span, "lease_lost", "")
		return
	}
	var retryAt *time.Time
	outcome := "failed"
	if ep.Attempts < r.MaxAttempts {
		t := time.Now().Add(r.delay(ep.Attempts))
		retryAt = &t
		r.Metrics.Retried.Add(1)
		outcome = "retry"
	} else {
		r.Metrics.Failed.Add(1)
	}
	reason := Reason(err)
	r.Log.WarnContext(j.ctx, "episode attempt failed", "episode", ep.UUID, "group_id", ep.GroupID, "attempt", ep.Attempts,
		"retry", retryAt != nil, "reason", reason, "error", err.Error())
	if retryAt != nil {
		// Before the release: its commit wakes the claimer, which must know when to look.
		r.retryDue(*retryAt)
	}
	r.release(j.ctx, ep, reason, retryAt, j.spent())
	endIngest(j.span, outcome, reason)
}

// The reasons a memory's ingestion failed, as its readers see them in last_error:
// a stable kind and a short message. The provider's or the database's own text goes
// to the service log only, under the memory's id.
var reasons = map[string]string{
	"llm_malformed":          "the language model's answer could not be read",
	"llm_cut_off":            "the language model's answer ran on (to llm.max_tokens, or into padding) before it ended",
	"llm_timeout":            "the language model did not answer in time",
	"llm_network":            "the language model could not be reached",
	"llm_rate_limited":       "the language model's provider refused: too many requests",
	"llm_server":             "the language model's provider failed",
	"llm_refused":            "the language model's provider refused the request",
	"llm_unsupported_format": "the model server refuses llm.structured_output; set another mode, or auto",
	"store_unavailable":      "the graph database could not be reached",
	"internal":               "extraction failed; the service log has the detail under this memory's id",
}

// Reason is what last_error says of err.
func Reason(err error) string {
	kind := "internal"
	var llm *LLMError
	switch {
	case errors.As(err, &llm) && reasons["llm_"+llm.Kind] != "":
		kind = "llm_" + llm.Kind
	case errors.As(err, &llm):
		kind = "llm_refused" // an HTTP status no retry helps: http_400, http_401, ...
	case graph.ErrorCode(err) == graph.EUNAVAILABLE:
		kind = "store_unavailable"
	}
	return kind + ": " + reasons[kind]
}

// Reasons lists every last_error Reason gives.
func Reasons() []string {
	var out []string
	for kind, message := range reasons {
		out = append(out, kind+": "+message)
	}
	sort.Strings(out)
	return out
}

// giveBack returns a claimed episode to the queue without counting the attempt, with
// what the attempt cost. It runs even when ctx has ended, within its own time limit.
func (r *Runner) giveBack(ctx context.Context, ep *graph.Episode, cost graph.Cost) {
	returnCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.Queue.Return(returnCtx, ep.UUID, r.id, cost); err != nil {
		r.Log.Warn("returning an episode", "episode", ep.UUID, "error", err.Error())
	}
}

// release gives a claimed episode back: to be retried at retryAt, or failed when nil,
// with what the attempt cost. It runs even when ctx has ended, within its own time
// limit.
func (r *Runner) release(ctx context.Context, ep *graph.Episode, reason string, retryAt *time.Time, cost graph.Cost) {
	releaseCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.Queue.Release(releaseCtx, ep.UUID, r.id, truncate(reason, 500), retryAt, cost); err != nil {
		r.Log.Warn("releasing an episode", "episode", ep.UUID, "error", err.Error())
	}
}

// keepLease renews the lease at a third of its length; when it is lost the attempt is
// cancelled, so two workers never save one episode.
func (r *Runner) keepLease(ctx context.Context, cancel context.CancelCauseFunc, id string) {
	tick := time.NewTicker(r.Lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := r.Queue.Renew(ctx, id, r.id, r.Lease); err != nil && ctx.Err() == nil {
				if graph.ErrorCode(err) == graph.ECONFLICT {
					cancel(errors.New("lease lost"))
					return
				}
				r.Log.Warn("renewing a lease", "episode", id, "error", err.Error())
			}
		}
	}
}

func (r *Runner) delay(attempt int) time.Duration {
	return backoff(r.Backoff, attempt, 5*time.Minute)
}

// backoff is how long to wait before attempt (1 the first retry): base doubled for
// each attempt before it, at most ceiling, with a quarter of jitter either way so that
// many waiting at once do not come back at once. The LLM calls' retries and the
// pipeline's both wait so.
func backoff(base time.Duration, attempt int, ceiling time.Duration) time.Duration {
	d := min(float64(base)*math.Pow(2, float64(max(attempt-1, 0))), float64(ceiling))
	return time.Duration(d * (0.75 + 0.5*mrand.Float64()))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
