package config

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// dockerInstruction is one instruction of a Dockerfile: its line, keyword
// and text (continuation lines joined).
type dockerInstruction struct {
	line    int
	keyword string
	text    string
}

// parseDockerfile splits a Dockerfile into its instructions and its parser
// directives (the "# name=value" comments before the first instruction).
func parseDockerfile(src string) (instrs []dockerInstruction, directives []string) {
	sc := bufio.NewScanner(strings.NewReader(src))
	var cur *dockerInstruction
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			if len(instrs) == 0 && cur == nil && strings.Contains(line, "=") {
				directives = append(directives, strings.TrimSpace(strings.TrimPrefix(line, "#")))
			}
			continue
		}
		if line == "" {
			continue
		}
		if cur == nil {
			kw, _, _ := strings.Cut(line, " ")
			cur = &dockerInstruction{line: n, keyword: strings.ToUpper(kw)}
		}
		cont := strings.HasSuffix(line, "\\")
		cur.text += strings.TrimSuffix(line, "\\") + " "
		if !cont {
			cur.text = strings.TrimSpace(cur.text)
			instrs = append(instrs, *cur)
			cur = nil
		}
	}
	if cur != nil {
		instrs = append(instrs, *cur)
	}
	return instrs, directives
}

// classicKeywords are the instructions the classic (pre-BuildKit) builder
// knows.
var classicKeywords = []string{"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT",
	"VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL", "MAINTAINER"}

// buildKitOnly matches what only BuildKit reads: RUN's --mount, --network
// and --security; COPY and ADD's --chmod, --link, --parents, --exclude and
// --checksum; ADD --keep-git-dir; heredocs (<<EOF).
var buildKitOnly = regexp.MustCompile(`(?i)^(RUN\b.*\s--(mount|network|security)\b|(COPY|ADD)\b.*\s--(chmod|link|parents|exclude|checksum|keep-git-dir)\b)|<<-?\s*["']?[A-Za-z_]+`)

// classicBuilderProblems lists what in a Dockerfile the classic builder
// cannot build.
func classicBuilderProblems(src string) []string {
	instrs, directives := parseDockerfile(src)
	var out []string
	for _, d := range directives {
		if strings.HasPrefix(strings.ToLower(d), "syntax") {
			out = append(out, "parser directive "+d+" (a BuildKit frontend)")
		}
	}
	for _, in := range instrs {
		if !slices.Contains(classicKeywords, in.keyword) {
			out = append(out, "unknown instruction "+in.keyword)
		}
		if buildKitOnly.MatchString(in.text) {
			out = append(out, "BuildKit-only syntax: "+in.text)
		}
	}
	return out
}

// TestDockerfileClassicBuilder: the Dockerfile builds with the classic
// builder (docker-compose 1.x, DOCKER_BUILDKIT=0) as with BuildKit: no
// "# syntax=" directive, no RUN --mount, no heredocs, no COPY --chmod or
// --link. The modules are downloaded in a layer before the sources are
// copied, so that a change to the sources reuses it.
func TestDockerfileClassicBuilder(t *testing.T) {
	t.Parallel()
	// The checker itself, on what it must refuse and accept.
	for _, tc := range []struct {
		name, src string
		bad       bool
	}{
		{"syntax directive", "# syntax=docker/dockerfile:1\nFROM scratch\n", true},
		{"cache mount", "FROM golang\nRUN --mount=type=cache,target=/root/.cache/go-build \\\n    go build .\n", true},
		{"mount on a continuation line", "FROM golang\nRUN \\\n  --mount=type=cache,target=/go \\\n  go build .\n", true},
		{"heredoc", "FROM debian\nRUN <<EOF\napt-get update\nEOF\n", true},
		{"COPY --chmod", "FROM scratch\nCOPY --chmod=755 a /a\n", true},
		{"COPY --link", "FROM scratch\nCOPY --link a /a\n", true},
		{"classic", "# a comment = not a directive\nFROM golang AS build\nCOPY go.mod go.sum ./\nRUN go mod download\nCOPY --from=build --chown=1:1 /a /a\n", false},
	} {
		if got := classicBuilderProblems(tc.src); (len(got) > 0) != tc.bad {
			t.Errorf("%s: problems %q, want bad=%v", tc.name, got, tc.bad)
		}
	}

	raw, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if p := classicBuilderProblems(string(raw)); len(p) > 0 {
		t.Errorf("the Dockerfile needs BuildKit:\n%s", strings.Join(p, "\n"))
	}
	instrs, _ := parseDockerfile(string(raw))
	step := func(text string) int {
		for i, in := range instrs {
			if in.text == text {
				return i
			}
		}
		return -1
	}
	mods, download, all := step("COPY go.mod go.sum ./"), step("RUN go mod download"), step("COPY . .")
	if mods < 0 || download != mods+1 || all < download {
		t.Errorf("the modules are not downloaded in a layer of their own before the sources are copied (steps %d, %d, %d)", mods, download, all)
	}
	for i, in := range instrs[:max(download, 0)] {
		if in.keyword == "ARG" && i > 0 {
			t.Errorf("line %d: %s before the module download rebuilds it whenever its value changes", in.line, in.text)
		}
	}
}

// composeFile is the part of docker-compose.yml the checks read.
type composeFile struct {
	Services map[string]struct {
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Command     []string          `yaml:"command"`
		Entrypoint  []string          `yaml:"entrypoint"`
		User        string            `yaml:"user"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// readCompose parses docker-compose.yml.
func readCompose(t *testing.T) composeFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(raw, &cf); err != nil {
		t.Fatal(err)
	}
	return cf
}

// The replica set's files in config/compose.
const (
	mongoKeyfileScript = "config/compose/mongo-keyfile.sh"
	mongoRSScript      = "config/compose/mongo-rs.js"
)

// TestComposeMongoReplicaSet: MongoDB runs as the single-node replica set
// rs0 with a key file (authentication is on), which a one-shot service
// writes before mongod starts; the health check runs mongo-rs.js, which
// initiates the set; the service's URI names the set, so that the driver
// retries writes.
func TestComposeMongoReplicaSet(t *testing.T) {
	t.Parallel()
	cf := readCompose(t)
	mongo, keyfile, calendar := cf.Services["mongo"], cf.Services["mongo-keyfile"], cf.Services["calendar"]
	const keyPath = "/etc/mongo-keyfile/mongo.key"
	cmd := strings.Join(mongo.Command, " ")
	for _, want := range []string{"--replSet rs0", "--keyFile " + keyPath} {
		if len(mongo.Command) == 0 || mongo.Command[0] != "mongod" || !strings.Contains(cmd, want) {
			t.Errorf("mongo's command %q lacks %q", cmd, want)
		}
	}
	if !slices.Contains(mongo.Volumes, "mongo-keyfile:/etc/mongo-keyfile:ro") {
		t.Errorf("mongo does not mount the key file volume read-only: %q", mongo.Volumes)
	}
	if c := mongo.DependsOn["mongo-keyfile"].Condition; c != "service_completed_successfully" {
		t.Errorf("mongo waits for mongo-keyfile with %q, want service_completed_successfully", c)
	}
	if _, ok := cf.Volumes["mongo-keyfile"]; !ok {
		t.Error("no mongo-keyfile volume")
	}
	// The one-shot writes the key where mongo reads it.
	if !slices.Contains(keyfile.Volumes, "mongo-keyfile:/keyfile") ||
		!slices.Contains(keyfile.Volumes, "./"+mongoKeyfileScript+":/usr/local/bin/mongo-keyfile.sh:ro") {
		t.Errorf("mongo-keyfile's volumes %q", keyfile.Volumes)
	}
	if got := strings.Join(append(append([]string{}, keyfile.Entrypoint...), keyfile.Command...), " "); got != "/bin/sh /usr/local/bin/mongo-keyfile.sh /keyfile/mongo.key" || keyfile.User != "root" {
		t.Errorf("mongo-keyfile runs %q as %q, want the script on /keyfile/mongo.key as root", got, keyfile.User)
	}
	// The health check initiates the set and waits for the primary.
	hc := strings.Join(mongo.Healthcheck.Test, " ")
	if !slices.Contains(mongo.Volumes, "./"+mongoRSScript+":/etc/eventcal/mongo-rs.js:ro") || !strings.Contains(hc, "--file /etc/eventcal/mongo-rs.js") ||
		!strings.Contains(hc, "$$MONGO_INITDB_ROOT_USERNAME") {
		t.Errorf("mongo's health check %q (volumes %q) does not run mongo-rs.js as root", hc, mongo.Volumes)
	}
	if uri := calendar.Environment["MONGO_URI"]; !strings.Contains(uri, "replicaSet=rs0") {
		t.Errorf("MONGO_URI %q does not name the replica set", uri)
	}
	if c := calendar.DependsOn["mongo"].Condition; c != "service_healthy" {
		t.Errorf("calendar waits for mongo with %q, want service_healthy (the primary elected)", c)
	}
}

// TestMongoKeyfileScript runs mongo-keyfile.sh twice on a temporary path:
// it writes a key MongoDB accepts (6 to 1024 base64 characters) readable
// by its owner alone, and keeps it on the second run.
func TestMongoKeyfileScript(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", mongoKeyfileScript))
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "mongo.key")
	owner := fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
	var first []byte
	for run := range 2 {
		cmd := exec.Command(sh, script, key)
		cmd.Env = append(os.Environ(), "KEYFILE_OWNER="+owner)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("run %d: %v: %s", run, err, out)
		}
		st, err := os.Stat(key)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o400 {
			t.Errorf("run %d: mode %v, want 0400", run, st.Mode().Perm())
		}
		b, err := os.ReadFile(key)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 6 || len(b) > 1024 || strings.Trim(string(b), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != "" {
			t.Errorf("run %d: key of %d bytes %.40q..., want 6 to 1024 base64 characters", run, len(b), b)
		}
		if run == 0 {
			first = b
		} else if string(b) != string(first) {
			t.Error("the second run replaced the key")
		}
	}
	if _, err := os.Stat(key + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}
}

// TestMongoRSScript runs mongo-rs.js with Node against a fake mongosh
// (db, rs, quit): it initiates rs0 with the one member once, only when
// the set is not initiated yet, and exits 0 only on the writable primary.
func TestMongoRSScript(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the replica set script is not run (TestComposeMongoReplicaSet still checks compose)")
	}
	script, err := filepath.Abs(filepath.Join("..", mongoRSScript))
	if err != nil {
		t.Fatal(err)
	}
	// state: "uninitiated" (replSetGetStatus throws code 94), "secondary",
	// "primary", or "unauthorized" (it throws code 13).
	const harness = `
const fs = require('fs'), vm = require('vm');
const state = process.argv[2], initiated = [];
let code = null;
class Quit { constructor(c) { this.c = c; } }
const db = {
  adminCommand: (cmd) => {
    if (state === 'uninitiated') { const e = new Error('no replset config has been received'); e.code = 94; throw e; }
    if (state === 'unauthorized') { const e = new Error('requires authentication'); e.code = 13; throw e; }
    return { ok: 1, set: 'rs0' };
  },
  hello: () => ({ isWritablePrimary: state === 'primary' || (state === 'uninitiated' && initiated.length > 0) }),
};
const rs = { initiate: (cfg) => { initiated.push(cfg); return { ok: 1 }; } };
try {
  vm.runInNewContext(fs.readFileSync(process.argv[1], 'utf8'), { db, rs, quit: (c) => { throw new Quit(c); }, print: () => {}, process: { env: {} }, JSON });
} catch (e) {
  if (!(e instanceof Quit)) throw e;
  code = e.c;
}
process.stdout.write(JSON.stringify({ code, initiated }));
`
	type member struct {
		ID   int    `json:"_id"`
		Host string `json:"host"`
	}
	type result struct {
		Code      *int `json:"code"`
		Initiated []struct {
			ID      string   `json:"_id"`
			Members []member `json:"members"`
		} `json:"initiated"`
	}
	for _, tc := range []struct {
		state    string
		code     int
		initiate bool
	}{
		{"uninitiated", 0, true},
		{"secondary", 1, false},
		{"primary", 0, false},
		{"unauthorized", 1, false},
	} {
		t.Run(tc.state, func(t *testing.T) {
			out, err := exec.Command(node, "-e", harness, script, tc.state).Output()
			if err != nil {
				t.Fatalf("harness: %v", err)
			}
			var r result
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("harness output %q: %v", out, err)
			}
			if r.Code == nil || *r.Code != tc.code {
				t.Errorf("exit code %v, want %d", r.Code, tc.code)
			}
			if !tc.initiate {
				if len(r.Initiated) != 0 {
					t.Errorf("initiated %+v, want nothing", r.Initiated)
				}
				return
			}
			if len(r.Initiated) != 1 || r.Initiated[0].ID != "rs0" || len(r.Initiated[0].Members) != 1 || r.Initiated[0].Members[0].Host != "mongo:27017" {
				t.Errorf("initiated %+v, want rs0 with the one member mongo:27017", r.Initiated)
			}
		})
	}
}

// mongoInitScript is the script compose mounts into the mongo image's
// /docker-entrypoint-initdb.d.
const mongoInitScript = "config/compose/mongo-init.js"

// TestComposeMongoLeastPrivilege: the service connects to MongoDB as its
// own user, created on the first start by an init script, with readWrite
// on the service's database alone; no root credential is in the service's
// environment.
func TestComposeMongoLeastPrivilege(t *testing.T) {
	t.Parallel()
	cf := readCompose(t)
	calendar, mongo := cf.Services["calendar"], cf.Services["mongo"]
	if calendar.Environment == nil || mongo.Environment == nil {
		t.Fatalf("no calendar or mongo service with an environment: %+v", cf.Services)
	}
	for name, svc := range cf.Services {
		if name == "mongo" {
			continue
		}
		for k, v := range svc.Environment {
			if strings.Contains(k, "MONGO_INITDB") || strings.Contains(v, "MONGO_INITDB") {
				t.Errorf("service %s: %s=%s hands MongoDB's root credentials over", name, k, v)
			}
		}
	}
	uri := calendar.Environment["MONGO_URI"]
	for _, want := range []string{"${MONGO_APP_USERNAME}:${MONGO_APP_PASSWORD}@mongo:27017/${MONGO_DATABASE:-calendar}", "authSource=${MONGO_DATABASE:-calendar}"} {
		if !strings.Contains(uri, want) {
			t.Errorf("MONGO_URI %q lacks %q", uri, want)
		}
	}
	if db := calendar.Environment["MONGO_DATABASE"]; db != "${MONGO_DATABASE:-calendar}" {
		t.Errorf("the service's MONGO_DATABASE is %q", db)
	}
	// The mongo service creates that user in that database.
	if got := mongo.Environment["MONGO_INITDB_DATABASE"]; got != "${MONGO_DATABASE:-calendar}" {
		t.Errorf("MONGO_INITDB_DATABASE = %q, want the service's database", got)
	}
	for _, v := range []string{"MONGO_APP_USERNAME", "MONGO_APP_PASSWORD"} {
		if !strings.HasPrefix(mongo.Environment[v], "${"+v+":?") {
			t.Errorf("mongo's %s = %q, want a required ${%s:?...}", v, mongo.Environment[v], v)
		}
	}
	if !slices.Contains(mongo.Volumes, "./"+mongoInitScript+":/docker-entrypoint-initdb.d/10-eventcal-user.js:ro") {
		t.Errorf("mongo does not mount %s into /docker-entrypoint-initdb.d: %q", mongoInitScript, mongo.Volumes)
	}
	if _, err := os.Stat(filepath.Join("..", mongoInitScript)); err != nil {
		t.Fatal(err)
	}
}

// TestMongoInitScript runs the init script with Node (mongosh is Node:
// the script sees process.env and a db object) against a recording db: it
// creates one user, from MONGO_APP_USERNAME and MONGO_APP_PASSWORD, in
// MONGO_INITDB_DATABASE, with readWrite on that database and no other
// role; without the credentials, or with the root user's name, it fails.
func TestMongoInitScript(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the init script is not run (TestComposeMongoLeastPrivilege still checks compose)")
	}
	script, err := filepath.Abs(filepath.Join("..", mongoInitScript))
	if err != nil {
		t.Fatal(err)
	}
	// A db whose getSiblingDB(name).createUser(spec) records {db, spec}.
	const harness = `
const fs = require('fs'), vm = require('vm');
const calls = [];
const db = { getSiblingDB: (name) => ({ createUser: (spec) => calls.push({ db: name, spec: spec }) }) };
vm.runInNewContext(fs.readFileSync(process.argv[1], 'utf8'), { db, process: { env: JSON.parse(process.argv[2]) }, print: () => {} });
process.stdout.write(JSON.stringify(calls));
`
	type call struct {
		DB   string `json:"db"`
		Spec struct {
			User  string `json:"user"`
			Pwd   string `json:"pwd"`
			Roles []struct {
				Role string `json:"role"`
				DB   string `json:"db"`
			} `json:"roles"`
		} `json:"spec"`
	}
	run := func(env map[string]string) ([]call, error) {
		e, _ := json.Marshal(env)
		out, err := exec.Command(node, "-e", harness, script, string(e)).Output()
		if err != nil {
			return nil, err
		}
		var calls []call
		if err := json.Unmarshal(out, &calls); err != nil {
			t.Fatalf("harness output %q: %v", out, err)
		}
		return calls, nil
	}
	root := map[string]string{"MONGO_INITDB_ROOT_USERNAME": "root", "MONGO_INITDB_ROOT_PASSWORD": "root-secret"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range root {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		env    map[string]string
		db     string
		refuse bool
	}{
		{"the service's database", with("MONGO_INITDB_DATABASE", "agenda", "MONGO_APP_USERNAME", "eventcal", "MONGO_APP_PASSWORD", "app-secret"), "agenda", false},
		{"the default database", with("MONGO_APP_USERNAME", "eventcal", "MONGO_APP_PASSWORD", "app-secret"), "calendar", false},
		{"no password", with("MONGO_INITDB_DATABASE", "calendar", "MONGO_APP_USERNAME", "eventcal"), "", true},
		{"no user", with("MONGO_INITDB_DATABASE", "calendar", "MONGO_APP_PASSWORD", "app-secret"), "", true},
		{"the root user's name", with("MONGO_INITDB_DATABASE", "calendar", "MONGO_APP_USERNAME", "root", "MONGO_APP_PASSWORD", "app-secret"), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := run(tc.env)
			if tc.refuse {
				if err == nil {
					t.Fatalf("the script ran without failing: %+v", calls)
				}
				return
			}
			if err != nil {
				t.Fatalf("the script failed: %v", err)
			}
			if len(calls) != 1 {
				t.Fatalf("%d createUser calls, want 1: %+v", len(calls), calls)
			}
			c := calls[0]
			if c.DB != tc.db || c.Spec.User != "eventcal" || c.Spec.Pwd != "app-secret" {
				t.Errorf("createUser in %q of %q/%q, want %q eventcal/app-secret", c.DB, c.Spec.User, c.Spec.Pwd, tc.db)
			}
			if len(c.Spec.Roles) != 1 || c.Spec.Roles[0].Role != "readWrite" || c.Spec.Roles[0].DB != tc.db {
				t.Errorf("roles %+v, want readWrite on %s alone", c.Spec.Roles, tc.db)
			}
		})
	}
}
