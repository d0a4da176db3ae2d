package values

import (
	"net/url"
	"path"
	"strings"
	"unicode"
)

// WebURL reports whether s is an absolute http or https URL with a host
// that holds no white space, no control character and none of the
// characters RFC 3986 never allows unencoded that could end an HTML
// attribute or open markup where the URL is written out: '"', '<', '>',
// '`' and '\'. Every website and image URL a write stores passes it, the
// API's and the importer's alike.
func WebURL(s string) bool {
	if strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("\"<>`\\", r)
	}) {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https"
}

// imageExtensions are the file types accepted as image URLs; a URL without
// an extension is accepted too (the service never fetches it).
var imageExtensions = map[string]bool{"jpg": true, "jpeg": true, "png": true, "gif": true, "webp": true,
	"avif": true, "svg": true, "bmp": true, "ico": true, "tif": true, "tiff": true, "heic": true}

// ImageURLExtension returns the lower-case extension of a URL's path and
// whether it is acceptable for an image: one of the image file types, or
// none.
func ImageURLExtension(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(u.Path), "."))
	if ext == "" {
		return "", true
	}
	return ext, imageExtensions[ext]
}
