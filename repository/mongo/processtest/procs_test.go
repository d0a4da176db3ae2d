package processtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/search/meili/meilisim"
)

// adminToken is the ADMIN_TOKEN of every replica.
const adminToken = "process-test-admin-token"

// apiRoot is the API's root path with the default REST_ROOT and
// API_NAMESPACE.
const apiRoot = "/calendar/events/v1"

// skipShort skips t under -short.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skips the tests that build and run the service as separate processes")
	}
}

// repoRoot returns the root of the repository (the module).
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(testsupport.GoTool(t), "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// binDir holds the binaries the tests build (TestMain makes and removes
// it): each is built once and shared by the tests that run it.
var binDir string

func TestMain(m *testing.M) {
	testsupport.RunMain(serverMain)
	dir, err := os.MkdirTemp("", "processtest-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// serverMain runs, when a test starts this binary as a server
// (serverCommand), the test server its first argument names.
func serverMain() {
	run := map[string]func([]string) error{"ferretdb": mongotest.Command, "meilisim": meilisim.Command}[os.Args[1]]
	if run == nil {
		fmt.Fprintf(os.Stderr, "processtest: no server %q\n", os.Args[1])
		os.Exit(2)
	}
	if err := run(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// serverCommand returns how to start the test server name ("ferretdb"
// or "meilisim", the commands under the module root at pkg): this test
// binary running it (testsupport.MainCommand), so that no test links the
// two commands again, with the arguments that come first. Under the race
// detector the command is built instead: a race-instrumented FerretDB is
// too slow for the processes that share it.
func serverCommand(t *testing.T, root, name, pkg string) (bin string, args []string) {
	t.Helper()
	if raceEnabled {
		return binary(t, root, pkg), nil
	}
	return testsupport.MainCommand(t), []string{name}
}

// built is one binary of binary: built once, by the first test asking.
type built struct {
	once sync.Once
	path string
	err  error
}

// builds are the binaries built so far, by module directory and
// package.
var (
	buildsMu sync.Mutex
	builds   = map[[2]string]*built{}
)

// binary returns the path of the package pkg of the module at dir, built
// the first time a test asks for it; the tests share it. Every binary is
// linked without its symbol table and DWARF (-ldflags "-s -w", as the
// Dockerfile builds): the build cache keeps no link, and they take half
// its CPU. The binaries are kept between runs (keptBinDir), so that go
// build finds them up to date when their sources did not change and
// links nothing. No build uses -trimpath: the dependencies are then the
// very packages go test compiled (same versions, same flags), and only the
// module's own packages are compiled, once per source directory.
func binary(t *testing.T, dir, pkg string) string {
	t.Helper()
	buildsMu.Lock()
	b := builds[[2]string{dir, pkg}]
	if b == nil {
		b = &built{path: filepath.Join(binDir, fmt.Sprintf("bin%d", len(builds)))}
		if keep := keptBinDir(); keep != "" {
			b.path = filepath.Join(keep, keptBinName(dir, pkg))
		}
		builds[[2]string{dir, pkg}] = b
	}
	buildsMu.Unlock()
	gotool := testsupport.GoTool(t)
	b.once.Do(func() {
		began := time.Now()
		cmd := exec.Command(gotool, "build", "-ldflags", "-s -w", "-o", b.path, pkg)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s in %s: %v\n%s", pkg, dir, err, out)
		}
		// Logged (go test -v): a build that compiles, not just checks,
		// is most of a slow run's time.
		if st := cmd.ProcessState; st != nil {
			t.Logf("go build %s in %s: %.2fs, %.2f CPU-s", pkg, dir, time.Since(began).Seconds(), (st.UserTime() + st.SystemTime()).Seconds())
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// keptBinDir returns the directory the binaries are built in, kept from
// one run to the next (under the user's cache directory), or "" when there
// is none (binDir then holds them for one run). go build leaves a binary
// that is up to date as it is, so a run whose sources did not change
// links nothing: each link costs about 1.5 CPU-seconds.
func keptBinDir() string {
	keptBin.once.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			return
		}
		dir := filepath.Join(cache, "eventcal", "processtest-bin")
		if os.MkdirAll(dir, 0o755) == nil {
			keptBin.dir = dir
		}
	})
	return keptBin.dir
}

// keptBin is keptBinDir's directory, found once.
var keptBin struct {
	once sync.Once
	dir  string
}

// keptBinName names the kept binary of package pkg of the module at dir:
// one per checkout whose tests build it (even for the previous release,
// whose sources all checkouts share), so that two checkouts tested at
// once do not build over each other's.
func keptBinName(dir, pkg string) string {
	wd, _ := os.Getwd()
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s", wd, dir, pkg)))
	return hex.EncodeToString(sum[:8])
}

// childGCPercent is the collector's target (GOGC) of the processes the
// tests start (FerretDB, the simulator, the service replicas), unless GOGC
// is set or the race detector runs (testsupport.ChildGOGC): they allocate
// much and keep little, and what the tests prove (no acknowledged write
// lost across kills and restarts) does not depend on how often they
// collect.
const childGCPercent = 400

// proc is a running process with its output kept.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *testsupport.SyncBuffer
	done chan struct{}
	err  error
}

// start runs bin with args and env (added to a minimal environment); its
// first stdout line is returned when firstLine, else stdout is kept
// with stderr. The process is killed when the test ends.
func start(t *testing.T, name, bin string, env []string, firstLine bool, args ...string) (*proc, string) {
	t.Helper()
	p := &proc{name: name, out: &testsupport.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TZ=UTC", "GOGC=" + testsupport.ChildGOGC(childGCPercent)}, env...)
	p.cmd.Stderr = p.out
	var stdout io.Reader
	if firstLine {
		r, err := p.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout = r
	} else {
		p.cmd.Stdout = p.out
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	line := ""
	if firstLine {
		br := bufio.NewReader(stdout)
		l, err := br.ReadString('\n')
		if err != nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
			t.Fatalf("%s: first line %q: %v\n%s", name, l, err, p.out.String())
		}
		line = strings.TrimSpace(l)
		go io.Copy(p.out, br)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	return p, line
}

// kill ends p with SIGKILL (if it still runs) and waits for it.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop ends p with SIGTERM and waits for it, failing t when it does not
// end by the test's deadline.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-testdeadline.After(t):
		t.Fatalf("%s did not stop after SIGTERM\n%s", p.name, p.out.String())
	}
}

// servers are the shared servers of a test: FerretDB and the
// Meilisearch simulator.
type servers struct {
	mongoURI, meiliURL string
	client             *mongo.Client
}

// meiliKey is the simulator's master key.
const meiliKey = "process-test-master-key-0123456789"

// startServers builds and starts the standalone FerretDB (or uses the
// server TEST_MONGO_URI names: mongotest.EnvURI) and the Meilisearch
// simulator (simulating version 1.18.0).
func startServers(t *testing.T, root string) *servers {
	t.Helper()
	meili, meiliArgs := serverCommand(t, root, "meilisim", "./search/meili/meilisim/cmd/meilisim")
	s := &servers{mongoURI: os.Getenv(mongotest.EnvURI)}
	if s.mongoURI == "" {
		ferret, args := serverCommand(t, root, "ferretdb", "./repository/mongo/mongotest/cmd/ferretdb")
		_, line := start(t, "ferretdb", ferret, nil, true, append(args, "-addr", "127.0.0.1:0", "-dir", filepath.Join(t.TempDir(), "ferret"))...)
		fAddr, ok := strings.CutPrefix(line, "listening on ")
		if !ok {
			t.Fatalf("ferretdb: first line %q", line)
		}
		s.mongoURI = "mongodb://" + fAddr + "/"
	}
	_, line := start(t, "meilisim", meili, nil, true, append(meiliArgs, "-addr", "127.0.0.1:0", "-master-key", meiliKey, "-version", "1.18.0")...)
	mAddr, ok := strings.CutPrefix(line, "listening on ")
	if !ok {
		t.Fatalf("meilisim: first line %q", line)
	}
	s.meiliURL = "http://" + mAddr
	client, err := mongo.Connect(options.Client().ApplyURI(s.mongoURI))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	s.client = client
	return s
}

// replica is one eventcal process.
type replica struct {
	*proc
	id   string
	base string
	bin  string
	env  []string
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startReplica runs the eventcal binary bin as replica id on the shared
// servers (database db) and waits until it is ready.
func startReplica(t *testing.T, s *servers, bin, id, db string) *replica {
	t.Helper()
	addr := freeAddr(t)
	env := []string{"MONGO_URI=" + s.mongoURI, "MONGO_DATABASE=" + db, "MEILI_URL=" + s.meiliURL, "MEILI_API_KEY=" + meiliKey,
		"LISTEN_ADDR=" + addr, "ADMIN_TOKEN=" + adminToken, "REPLICA_ID=" + id, "LEASE_TTL=3s", "WEBHOOK_ALLOW_PRIVATE=true",
		// A killed leader's claimed deliveries are sent again once the
		// claim expires (3 x WEBHOOK_TIMEOUT + grace): 8 s, not 35.
		"WEBHOOK_TIMEOUT=2s",
		"SHUTDOWN_TIMEOUT=5s", "DRAIN_DELAY=0", "DATA_DIR=" + t.TempDir(), "LOG_LEVEL=debug"}
	r := &replica{id: id, base: "http://" + addr + apiRoot, bin: bin, env: env}
	r.run(t)
	return r
}

// run starts r's process and waits until it answers /readyz.
func (r *replica) run(t *testing.T) {
	t.Helper()
	r.proc, _ = start(t, r.id, r.bin, r.env, false)
	host := strings.TrimSuffix(r.base, apiRoot)
	deadline := testdeadline.Of(t)
	for {
		res, err := http.Get(host + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-r.done:
			t.Fatalf("%s exited before it was ready: %v\n%s", r.id, r.err, r.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never ready\n%s", r.id, r.out.String())
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

// httpClient is the client of the API calls.
var httpClient = &http.Client{Timeout: time.Minute}

// call sends an API request with the admin token and returns the status
// and the decoded body (nil when it is not JSON). err is set only when no
// answer came.
func (r *replica) call(method, path string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return res.StatusCode, out, nil
}

// must is call failing t unless the answer is 2xx.
func (r *replica) must(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	code, out, err := r.call(method, path, body)
	if err != nil || code >= 300 {
		t.Fatalf("%s %s on %s: %d %v %v", method, path, r.id, code, out, err)
	}
	return out
}

// eventBody is the body creating an event titled title, within the
// default list window.
func eventBody(title string, day int) map[string]any {
	start := time.Now().UTC().AddDate(0, 1, day%300)
	return map[string]any{"title": title, "status": "publish",
		"start_date": start.Format("2006-01-02 15:04"), "end_date": start.Add(time.Hour).Format("2006-01-02 15:04")}
}

// listedIDs returns the IDs of the events r lists (every page).
func (r *replica) listedIDs() (map[int64]bool, error) {
	out := map[int64]bool{}
	for page := 1; ; page++ {
		code, body, err := r.call("GET", fmt.Sprintf("/events?per_page=50&page=%d&status=publish", page), nil)
		if err != nil {
			return nil, err
		}
		if code == http.StatusNotFound && page > 1 {
			return out, nil // past the last page
		}
		if code != http.StatusOK {
			return nil, fmt.Errorf("GET /events on %s: %d %v", r.id, code, body)
		}
		events, _ := body["events"].([]any)
		for _, e := range events {
			if id, ok := e.(map[string]any)["id"].(float64); ok {
				out[int64(id)] = true
			}
		}
		if len(events) < 50 {
			return out, nil
		}
	}
}

// hook is a message received by the webhook receiver.
type hook struct {
	ID, Type string
	Item     int64
}

// receiver is a webhook receiver: every message it gets, in order.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  []hook
	errs []string
}

// newReceiver starts a webhook receiver answering 204.
func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var msg struct {
			Type string `json:"type"`
			Item struct {
				ID float64 `json:"id"`
			} `json:"item"`
		}
		err := json.Unmarshal(raw, &msg)
		rc.mu.Lock()
		if err != nil {
			rc.errs = append(rc.errs, string(raw))
		}
		rc.got = append(rc.got, hook{ID: r.Header.Get("webhook-id"), Type: msg.Type, Item: int64(msg.Item.ID)})
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// messages returns a copy of what rc got.
func (rc *receiver) messages() []hook {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hook(nil), rc.got...)
}

// eventually polls cond until it holds, failing t at the test's deadline.
// It logs how long it waited, and when (go test -v shows it).
func eventually(t *testing.T, what string, cond func() bool, logs ...*replica) {
	t.Helper()
	deadline := testdeadline.Of(t)
	began := time.Now()
	// Logged (go test -v) so that a slow run shows what it waited on.
	defer func() {
		t.Logf("%s: after %.2fs (%s to %s UTC)", what, time.Since(began).Seconds(),
			began.UTC().Format("15:04:05.000"), time.Now().UTC().Format("15:04:05.000"))
	}()
	for !cond() {
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, r := range logs {
				fmt.Fprintf(&b, "\n--- %s ---\n%s", r.id, tail(r.out.String(), 4000))
			}
			t.Fatalf("%s: never true%s", what, b.String())
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
