// Package apidocs serves the API reference page: GET /docs renders the
// service's OpenAPI document with Swagger UI.
//
// Swagger UI's files are vendored, unchanged, in assets/ (package, version,
// licence and sha256 in assets/README.md; the hashes are pinned below) and
// embedded in the binary, so the page needs no CDN and works offline. The
// page runs under a strict Content-Security-Policy (ContentSecurityPolicy):
// scripts and styles from the service only, no inline script (the start-up
// code is init.js, a served file) and no eval.
//
// Every address on the page is relative to it: the stylesheets and scripts
// ("./docs/assets/…") and the OpenAPI document ("./calendar/events/v1/doc"
// under the default settings). Behind a proxy that mounts the service under
// a path prefix, the page at /prefix/docs therefore loads
// /prefix/docs/assets/… and /prefix/calendar/events/v1/doc.
//
// The files' addresses carry the first 16 hex digits of their sha256, so
// they are served with a year-long immutable cache lifetime; the page itself
// is revalidated on every load (ETag). Scripts and stylesheets are
// compressed (brotli or gzip, as the client accepts) once, on first use.
package apidocs

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/httpcache"
)

// Path is where the page is served. Its assets are under Path + "/assets/".
const Path = "/docs"

// assetsPrefix is the path under which the page's files are served.
const assetsPrefix = Path + "/assets/"

// ContentSecurityPolicy is the page's policy. Swagger UI needs nothing
// beyond its own script and stylesheet, data: images (the icons in its
// stylesheet, and the page's empty favicon) and fetching the OpenAPI
// document from the service (connect-src, also what "Try it out" sends).
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Viewer names the vendored npm package and its version (assets/README.md).
const (
	ViewerPackage = "swagger-ui-dist"
	ViewerVersion = "5.35.0"
)

// pinned is the sha256 of every vendored file, as published in
// swagger-ui-dist 5.35.0 (assets/README.md lists the same values).
var pinned = map[string]string{
	"swagger-ui-bundle.js":             "e6a898692f2d768e807c3ba4626068a69a2c5dd960dd6c76f3e4d3a3de180af2",
	"swagger-ui.css":                   "5ed08757e53da3e026d6cbecc61fe5d43585c9560b302d534ad56692519a273d",
	"swagger-ui-bundle.js.LICENSE.txt": "37eb6e7e59aed57b2c1acf076574b818ea07b74265717e0bd67b59e0baf9abbb",
	"LICENSE":                          "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30",
	"NOTICE":                           "0d20d1adef18aee3f40dd258172155521ce702ac445cb5f7b7d60ed32dad2fb2",
}

// vendored holds Swagger UI's files, its licence and notices included, so
// that the binary carries them.
//
//go:embed assets/swagger-ui-bundle.js assets/swagger-ui.css assets/swagger-ui-bundle.js.LICENSE.txt assets/LICENSE assets/NOTICE
var vendored embed.FS

// own holds the page's markup, start-up script and stylesheet.
//
//go:embed page.html init.js page.css
var own embed.FS

var pageTemplate = template.Must(template.ParseFS(own, "page.html"))

// contentTypes are the media types of the files the page uses.
var contentTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
}

// Docs serves the page and its files.
type Docs struct {
	page    []byte
	pageTag string
	// assets are the served files by their path below assetsPrefix
	// ("<hash>/<name>").
	assets map[string]*asset
}

// asset is one served file, with its compressed forms made on first use.
type asset struct {
	name, contentType string
	body              []byte
	// hash is the first 16 hex digits of the body's sha256: the ETag and
	// the directory in the file's address.
	hash   string
	gzOnce sync.Once
	gz     []byte
	brOnce sync.Once
	br     []byte
}

// sharedAssets are the files the page uses, by their embedded names, read
// and hashed once per process (and each compressed once, on first use):
// every Docs serves the same ones.
var sharedAssets = sync.OnceValue(func() map[string]*asset {
	m := map[string]*asset{}
	for _, f := range []struct {
		fsys fs.FS
		name string
	}{{vendored, "assets/swagger-ui.css"}, {own, "page.css"}, {vendored, "assets/swagger-ui-bundle.js"}, {own, "init.js"}} {
		body, err := fs.ReadFile(f.fsys, f.name)
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		base := path.Base(f.name)
		sum := sha256.Sum256(body)
		m[f.name] = &asset{name: base, contentType: contentTypes[path.Ext(base)], body: body, hash: hex.EncodeToString(sum[:8])}
	}
	return m
})

// New builds the page for the OpenAPI document served at documentPath (an
// absolute path on this service, e.g. "/calendar/events/v1/doc").
func New(documentPath string) *Docs {
	d := &Docs{assets: map[string]*asset{}}
	add := func(name string) string {
		a := sharedAssets()[name]
		d.assets[a.hash+"/"+a.name] = a
		return "." + assetsPrefix + a.hash + "/" + a.name
	}
	var page bytes.Buffer
	err := pageTemplate.Execute(&page, struct{ Style, PageStyle, Bundle, Init, Document string }{
		Style:     add("assets/swagger-ui.css"),
		PageStyle: add("page.css"),
		Bundle:    add("assets/swagger-ui-bundle.js"),
		Init:      add("init.js"),
		// Relative to the page (Path is one segment below the root); "./"
		// keeps a first segment holding ":" from reading as a scheme.
		Document: "./" + strings.TrimPrefix(documentPath, "/"),
	})
	if err != nil {
		panic(err) // a fixed template and strings: cannot happen
	}
	d.page = page.Bytes()
	sum := sha256.Sum256(d.page)
	d.pageTag = `"` + hex.EncodeToString(sum[:8]) + `"`
	return d
}

// Register adds the page's routes to r: GET (and HEAD) Path and the files
// below Path + "/assets/".
func (d *Docs) Register(r fiber.Router) {
	r.Get(Path, d.servePage)
	r.Get(assetsPrefix+"*", d.serveAsset)
}

// servePage serves the page. Fiber routes /docs/ here too: relative
// addresses would then resolve below /docs/, so it is sent to ../docs (a
// relative redirect, right behind a path prefix as well).
func (d *Docs) servePage(c *fiber.Ctx) error {
	if strings.HasSuffix(c.Path(), "/") {
		c.Set(fiber.HeaderLocation, "../docs")
		return c.SendStatus(fiber.StatusMovedPermanently)
	}
	h := &c.Response().Header
	h.Set(fiber.HeaderContentSecurityPolicy, ContentSecurityPolicy)
	h.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	h.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	h.Set(fiber.HeaderCacheControl, "no-cache")
	// The ETag also keeps the response cache's middleware from storing
	// and re-encoding the response.
	h.Set(fiber.HeaderETag, d.pageTag)
	if matches(c.Get(fiber.HeaderIfNoneMatch), d.pageTag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(d.page)
}

// serveAsset serves one of the page's files, compressed when the client
// accepts it; any other path below the assets prefix is "no route".
func (d *Docs) serveAsset(c *fiber.Ctx) error {
	a := d.assets[c.Params("*")]
	if a == nil {
		return apierr.NoRoute()
	}
	h := &c.Response().Header
	h.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	h.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	h.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	enc := ""
	if len(a.body) >= minCompressSize {
		enc = httpcache.Negotiate(c.Get(fiber.HeaderAcceptEncoding))
	}
	tag := `"` + a.hash + `"`
	if enc != "" {
		tag = `"` + a.hash + "-" + enc + `"`
	}
	h.Set(fiber.HeaderETag, tag)
	inm := c.Get(fiber.HeaderIfNoneMatch)
	for _, t := range []string{`"` + a.hash + `"`, `"` + a.hash + `-gzip"`, `"` + a.hash + `-br"`} {
		if matches(inm, t) {
			return c.SendStatus(fiber.StatusNotModified)
		}
	}
	c.Set(fiber.HeaderContentType, a.contentType)
	switch enc {
	case "br":
		h.Set(fiber.HeaderContentEncoding, "br")
		return c.Send(a.brotli())
	case "gzip":
		h.Set(fiber.HeaderContentEncoding, "gzip")
		return c.Send(a.gzip())
	}
	return c.Send(a.body)
}

// minCompressSize is the smallest file worth compressing.
const minCompressSize = 512

// brotliQuality is the brotli level of the files: the bundle (1.7 MB)
// compresses once, on first use.
const brotliQuality = 9

// brotli returns the body brotli-compressed, made once.
func (a *asset) brotli() []byte {
	a.brOnce.Do(func() {
		var b bytes.Buffer
		w := brotli.NewWriterLevel(&b, brotliQuality)
		w.Write(a.body) // a bytes.Buffer does not fail
		w.Close()
		a.br = b.Bytes()
	})
	return a.br
}

// gzip returns the body gzip-compressed, made once.
func (a *asset) gzip() []byte {
	a.gzOnce.Do(func() {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // a valid level
		w.Write(a.body)
		w.Close()
		a.gz = b.Bytes()
	})
	return a.gz
}

// matches reports whether an If-None-Match value lists tag (or is "*"),
// comparing weakly (a W/ prefix is ignored).
func matches(inm, tag string) bool {
	if inm == "" {
		return false
	}
	for _, t := range strings.Split(inm, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == tag {
			return true
		}
	}
	return false
}
