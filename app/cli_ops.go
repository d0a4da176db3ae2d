package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/sync/indexing"
)

// opsFlags are the flags shared by reindex and status.
type opsFlags struct {
	url, token string
	direct     bool
	// cancel (reindex only) stops the running rebuild.
	cancel bool
}

// opsCall is what an operations command works with: its flags, the
// configuration and the admin API of a running service to ask (nil to
// work directly on the store and the index).
type opsCall struct {
	opsFlags
	cfg   *config.Config
	admin *adminClient
}

// opsCommands runs the operations commands: "reindex", "status",
// "meili-key" and "healthcheck".
type opsCommands struct{ *cli }

// parseOps parses the flags of an operations command and loads the
// configuration. The status is -1 when the command should go on.
func (c *opsCommands) parseOps(name, synopsis string, args []string) (*opsCall, int) {
	fs := c.flagSet(name, synopsis)
	op := &opsCall{}
	f := &op.opsFlags
	fs.StringVar(&f.url, "url", "", "base URL of a running service (default: probe LISTEN_ADDR on 127.0.0.1)")
	fs.StringVar(&f.token, "token", "", "admin token for the service (default: ADMIN_TOKEN)")
	fs.BoolVar(&f.direct, "direct", false, "work on the store and index directly, without asking a service")
	if name == "reindex" {
		fs.BoolVar(&f.cancel, "cancel", false, "stop the rebuild running in the service (the live indexes are kept)")
	}
	if code := c.parseFlags(fs, args); code >= 0 {
		return nil, code
	}
	if op.cfg = c.loadConfig(); op.cfg == nil {
		return nil, exitUsage
	}
	if base := remoteBase(f, op.cfg); base != "" {
		token := f.token
		if token == "" {
			token = op.cfg.AdminToken
		}
		op.admin = &adminClient{base: base + op.cfg.APIRoot(), token: token, http: &http.Client{Timeout: 30 * time.Second}}
	}
	return op, -1
}

// remoteBase returns the base URL of a running service to ask, or "" to
// work directly: --url wins; else a service answering on LISTEN_ADDR.
// A service that accepts the connection but does not answer within
// probeWait (a busy machine, a service in the middle of a rebuild) is
// asked again for up to probeSlowWait before the command works
// directly: working directly beside a running service fails on the
// index's lock, so only a refused connection (or any other failure)
// means none runs.
func remoteBase(f *opsFlags, cfg *config.Config) string {
	return remoteBaseWithin(f, cfg, probeWait, probeSlowWait)
}

// remoteBaseWithin is remoteBase with the two probes' bounds (the tests
// take short ones).
func remoteBaseWithin(f *opsFlags, cfg *config.Config, wait, slowWait time.Duration) string {
	if f.direct {
		return ""
	}
	if f.url != "" {
		return strings.TrimSuffix(f.url, "/")
	}
	health, err := healthURL(cfg)
	if err != nil {
		return ""
	}
	if err := probe(health, wait, io.Discard); err != nil {
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || probe(health, slowWait, io.Discard) != nil {
			return ""
		}
	}
	return strings.TrimSuffix(health, "/healthz")
}

// probeWait and probeSlowWait bound remoteBase's two probes of
// LISTEN_ADDR.
const (
	probeWait     = time.Second
	probeSlowWait = 30 * time.Second
)

// adminClient talks to a running service's admin API.
type adminClient struct {
	base, token string
	http        *http.Client
}

// call sends a request and decodes the JSON answer into out.
func (a *adminClient) call(method, path string, out any) (int, error) {
	req, err := http.NewRequest(method, a.base+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", config.UserAgent("cli"))
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	res, err := a.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 400 && res.StatusCode != http.StatusConflict {
		var e struct {
			Code, Message string
		}
		_ = json.Unmarshal(body, &e)
		if res.StatusCode == http.StatusUnauthorized && a.token == "" {
			return res.StatusCode, fmt.Errorf("%s %s: the service needs an admin token: pass --token or set ADMIN_TOKEN", method, path)
		}
		return res.StatusCode, fmt.Errorf("%s %s: %d %s: %s", method, path, res.StatusCode, e.Code, e.Message)
	}
	return res.StatusCode, json.Unmarshal(body, out)
}

// reindex runs "reindex": through a running service's admin API when one
// answers, else directly on the store and the index.
func (c *opsCommands) reindex(args []string) int {
	op, code := c.parseOps("reindex", "reindex [--url URL] [--token T] [--direct] [--cancel]", args)
	if code >= 0 {
		return code
	}
	if op.admin != nil {
		if op.cancel {
			return c.reindexCancel(op.admin)
		}
		return c.reindexRemote(op.admin)
	}
	if op.cancel {
		fmt.Fprintf(c.stderr, "%s: --cancel needs a running service (none answers; pass --url)\n", programName)
		return exitFailure
	}
	return c.reindexDirect(op.cfg)
}

// reindexCancel stops the rebuild running in the service.
func (c *opsCommands) reindexCancel(a *adminClient) int {
	var env struct {
		Job indexing.Job `json:"job"`
	}
	status, err := a.call("DELETE", "/admin/reindex", &env)
	if status == http.StatusNotFound {
		fmt.Fprintln(c.stderr, "no rebuild is running")
		return exitOK
	}
	if err != nil {
		return c.fail(programName, err)
	}
	fmt.Fprintf(c.stdout, "rebuild %s %s after %d of %d documents; the live indexes were kept\n", env.Job.ID, env.Job.State, env.Job.Done, env.Job.Total)
	return exitOK
}

// reindexRemote starts (or joins) a rebuild on the service and follows it.
func (c *opsCommands) reindexRemote(a *adminClient) int {
	var env struct {
		Job  indexing.Job `json:"job"`
		Data struct {
			Job indexing.Job `json:"job"`
		} `json:"data"`
	}
	status, err := a.call("POST", "/admin/reindex", &env)
	if err != nil {
		return c.fail(programName, err)
	}
	job := env.Job
	if status == http.StatusConflict {
		job = env.Data.Job
		fmt.Fprintf(c.stderr, "a rebuild is already running (job %s); following it\n", job.ID)
	}
	// Ctrl-C stops following, not the rebuild: say so.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return c.followRemote(ctx, a, job)
}

// followRemote follows a job of the service until it ends or ctx does
// (Ctrl-C), which only stops following.
func (c *opsCommands) followRemote(ctx context.Context, a *adminClient, job indexing.Job) int {
	return c.follow(job, func() (indexing.Job, error) {
		if ctx.Err() != nil {
			return job, errFollowInterrupted
		}
		var cur struct {
			Job indexing.Job `json:"job"`
		}
		_, err := a.call("GET", "/admin/reindex", &cur)
		return cur.Job, err
	})
}

// errFollowInterrupted ends following a remote rebuild on Ctrl-C.
var errFollowInterrupted = errors.New("stopped following the rebuild; it goes on in the service (stop it with 'reindex --cancel')")

// follow shows a job's progress until it ends: a progress bar on a
// terminal, plain lines otherwise.
func (c *opsCommands) follow(job indexing.Job, poll func() (indexing.Job, error)) int {
	var bar *progressbar.ProgressBar
	if fd, ok := c.stderr.(*os.File); ok && isatty.IsTerminal(fd.Fd()) {
		// The bar's own rate and ETA count from its creation, so a rebuild
		// joined half-way would start with an absurd rate: the rate and
		// ETA shown are the job's, since the job started.
		bar = progressbar.NewOptions(max(job.Total, 1), progressbar.OptionSetWriter(c.stderr),
			progressbar.OptionSetDescription("reindex"), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(false), progressbar.OptionThrottle(100*time.Millisecond))
	}
	lastLine := time.Time{}
	for {
		rate, eta := jobRate(job, time.Now())
		if bar != nil {
			bar.ChangeMax(max(job.Total, 1))
			bar.Describe(fmt.Sprintf("reindex %.0f docs/s, ETA %s", rate, eta))
			_ = bar.Set(job.Done)
		} else if time.Since(lastLine) >= 2*time.Second || job.State != indexing.JobRunning {
			lastLine = time.Now()
			fmt.Fprintf(c.stderr, "reindex %s: %d/%d documents, %.0f docs/s, ETA %s\n", job.State, job.Done, job.Total, rate, eta)
		}
		if job.State != indexing.JobRunning {
			break
		}
		time.Sleep(500 * time.Millisecond) // polling interval of the progress display
		next, err := poll()
		if err != nil {
			return c.fail(programName, err)
		}
		job = next
	}
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(c.stderr)
	}
	if job.State == indexing.JobFailed {
		fmt.Fprintf(c.stderr, "%s: rebuild failed: %s\n", programName, job.Error)
		return exitFailure
	}
	fmt.Fprintf(c.stdout, "rebuild %s: %d documents in %s\n", job.State, job.Done, job.Finished.Sub(job.Started).Round(time.Millisecond))
	return exitOK
}

// jobRate is a job's rate since it started (documents per second) and the
// time left at that rate ("?" before there is a rate).
func jobRate(job indexing.Job, now time.Time) (float64, string) {
	rate := 0.0
	if el := now.Sub(job.Started).Seconds(); el > 0 {
		rate = float64(job.Done) / el
	}
	eta := "?"
	if rate > 0 && job.Total >= job.Done {
		eta = (time.Duration(float64(job.Total-job.Done)/rate) * time.Second).Round(time.Second).String()
	}
	return rate, eta
}

// status runs "status": the sync figures, from a running service when one
// answers, else computed from the store and the index directly.
func (c *opsCommands) status(args []string) int {
	op, code := c.parseOps("status", "status [--url URL] [--token T] [--direct]", args)
	if code >= 0 {
		return code
	}
	var st api.SyncStatus
	if op.admin != nil {
		if _, err := op.admin.call("GET", "/admin/sync", &st); err != nil {
			return c.fail(programName, err)
		}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		store, engine, closeAll, err := openDirect(ctx, op.cfg)
		if err != nil {
			return c.fail(programName, err)
		}
		defer closeAll()
		s, err := api.ComputeSyncStatus(ctx, store, engine, nil, time.Now())
		if err != nil {
			return c.fail(programName, err)
		}
		st = *s
	}
	printStatus(c.stdout, &st)
	return exitOK
}

// printStatus writes the sync figures as a table.
func printStatus(w io.Writer, st *api.SyncStatus) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	pending := fmt.Sprint(st.PendingMarks)
	if st.PendingCapped {
		pending = "≥ " + pending
	}
	fmt.Fprintf(tw, "pending marks\t%s\n", pending)
	fmt.Fprintf(tw, "oldest mark age\t%.1fs\n", st.OldestMarkAgeSec)
	if st.LastBatchAt != nil {
		fmt.Fprintf(tw, "last batch\t%s (%d marks)\n", st.LastBatchAt.Format(time.RFC3339), st.LastBatchSize)
	}
	if st.LastError != "" {
		fmt.Fprintf(tw, "last error\t%s\n", st.LastError)
	}
	for _, k := range []string{"events", "venues", "organizers"} {
		fmt.Fprintf(tw, "%s\tstore %d, index %d\n", k, st.Store[k], st.Index[k])
	}
	if st.FailingCount > 0 {
		fmt.Fprintf(tw, "failing marks\t%d (each retried with backoff; the others are indexed)\n", st.FailingCount)
		for _, m := range st.FailingMarks {
			fmt.Fprintf(tw, "  %s %d\t%d attempts, next %s: %s\n", m.Kind, m.ID, m.Attempts, m.NextAttempt.Format(time.RFC3339), m.LastError)
		}
		if len(st.FailingMarks) < st.FailingCount {
			fmt.Fprintf(tw, "  …\t%d more\n", st.FailingCount-len(st.FailingMarks))
		}
	}
	health := "healthy"
	if !st.EngineHealthy {
		health = "unhealthy: " + st.EngineError
	}
	fmt.Fprintf(tw, "search engine\t%s\n", health)
	_ = tw.Flush()
}

// reindexDirect rebuilds the indexes in this process (no service runs on
// this DATA_DIR or database).
func (c *opsCommands) reindexDirect(cfg *config.Config) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store, engine, closeAll, err := openDirect(ctx, cfg)
	if err != nil {
		return c.fail(programName, err)
	}
	defer closeAll()
	if err := engine.Init(ctx); err != nil {
		return c.fail(programName, err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	// With MongoDB, other processes may share the store: rebuild only while
	// holding the same lease the services use.
	lease := newLease(cfg, store, logger)
	go lease.Keep(ctx)
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = lease.Release(rctx)
	}()
	deadline := time.Now().Add(2*cfg.LeaseTTL + time.Second)
	for lease.IsLeader(ctx) != nil {
		if time.Now().After(deadline) || ctx.Err() != nil {
			fmt.Fprintf(c.stderr, "%s: another process holds the lease; ask it with --url\n", programName)
			return exitFailure
		}
		time.Sleep(100 * time.Millisecond) // poll interval while the lease is taken
	}
	w := newWorker(cfg, store, engine, logger)
	r := indexing.NewReindexer(store, engine, w, logger, nil, lease)
	defer r.Close()
	job, err := r.Start(ctx, "cli")
	if err != nil {
		return c.fail(programName, err)
	}
	return c.follow(job, func() (indexing.Job, error) {
		j, _ := r.Last()
		return j, nil
	})
}

// openDirect opens the store and the search engine for a command that works
// without a service; closeAll closes both.
func openDirect(ctx context.Context, cfg *config.Config) (repository.Store, search.Engine, func(), error) {
	store, err := openStore(ctx, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	engine, err := openSearch(ctx, cfg, nil)
	if err != nil {
		// A locked index already says which DATA_DIR and what to do.
		_ = closeStore(store)
		return nil, nil, nil, err
	}
	return store, engine, func() { _ = engine.Close(); _ = closeStore(store) }, nil
}
