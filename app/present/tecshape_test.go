package present

import (
	"encoding/json"
	"testing"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// TestTECShapedImageAndJSONLD (issue 34, finding 4): on The Events
// Calendar's root an image shows its width, height, filesize and sizes
// where they are known (as the original's {url, id, extension, width,
// height, filesize, sizes}), and json_ld has the original's
// eventAttendanceMode and performer; this service's root leaves the image
// size and performer out. An image of unknown size shows none of them.
func TestTECShapedImageAndJSONLD(t *testing.T) {
	t.Parallel()
	_, ev, l := typedFixture(t)
	l.posts[7].Image = &repository.ImageFields{URL: "http://example.test/a.png", Extension: "png", Width: 64, Height: 48, Filesize: 156,
		Sizes: []repository.ImageSize{{Name: "thumbnail", Width: 32, Height: 24, MimeType: "image/png", URL: "http://example.test/a-32x24.png"}}}
	tec := config.Default()
	tec.RestRoot, tec.APINamespace = "/wp-json", "tribe/events/v1"
	for _, tt := range []struct {
		name       string
		cfg        *config.Config
		image      string
		performer  bool
		attendance string
	}{
		{"tec root", tec, `{"url":"http://example.test/a.png","id":7,"extension":"png","width":64,"height":48,"filesize":156,` +
			`"sizes":{"thumbnail":{"width":32,"height":24,"mime-type":"image/png","url":"http://example.test/a-32x24.png"}}}`, true,
			"https://schema.org/OfflineEventAttendanceMode"},
		{"own root", config.Default(), `{"url":"http://example.test/a.png","id":7,"extension":"png"}`, false,
			"https://schema.org/OfflineEventAttendanceMode"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rn := &Renderer{cfg: tt.cfg, siteHost: "example.test", links: linkedRecords{gen: func() int64 { return 1 }, ttl: 0}}
			rn.placeRenderer = placeRenderer{rn}
			out := encode(t, rn.Event(ev, l, View{Lang: "en", Single: true}))
			var got struct {
				Image  json.RawMessage                 `json:"image"`
				Venue  struct{ Image json.RawMessage } `json:"venue"`
				JSONLD map[string]any                  `json:"json_ld"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if string(got.Image) != tt.image {
				t.Errorf("image %s, want %s", got.Image, tt.image)
			}
			if string(got.Venue.Image) != tt.image {
				t.Errorf("venue image %s, want %s", got.Venue.Image, tt.image)
			}
			if p, ok := got.JSONLD["performer"]; ok != tt.performer || (ok && p != "Organization") {
				t.Errorf("json_ld performer %v (present %v), want present %v", p, ok, tt.performer)
			}
			if a := got.JSONLD["eventAttendanceMode"]; a != tt.attendance {
				t.Errorf("json_ld eventAttendanceMode %v, want %s", a, tt.attendance)
			}
		})
	}
	// An image of unknown size: none of the size fields.
	l.posts[7].Image = &repository.ImageFields{URL: "http://example.test/a.png", Extension: "png"}
	rn := &Renderer{cfg: tec, siteHost: "example.test", links: linkedRecords{gen: func() int64 { return 1 }, ttl: 0}}
	rn.placeRenderer = placeRenderer{rn}
	out := encode(t, rn.Event(ev, l, View{Lang: "en"}))
	var got struct {
		Image json.RawMessage `json:"image"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if want := `{"url":"http://example.test/a.png","id":7,"extension":"png"}`; string(got.Image) != want {
		t.Errorf("image of unknown size %s, want %s", got.Image, want)
	}
}
