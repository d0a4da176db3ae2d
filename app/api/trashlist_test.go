package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
)

// TestTrashList: status=trash, alone or among other statuses, lists
// trashed events to callers who may edit events (as in the original
// plugin: every caller with edit_posts, contributors included); they
// appear in no other list; anonymous callers get 400 for any status but
// publish (recordings events-list-trash-only-* and
// events-list-error-anonymous-status-draft in
// wpimport/replay/testdata/tec-6.17.1).
func TestTrashList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var live, trashed []int64
	for i := range 5 {
		r := e.must(http.StatusCreated, "POST", root+"/events", "editor", map[string]any{
			"title": fmt.Sprintf("Trash candidate %d", i), "start_date": fmt.Sprintf("2030-01-0%d 10:00", i+1), "end_date": fmt.Sprintf("2030-01-0%d 12:00", i+1)})
		if i%2 == 0 {
			e.must(http.StatusOK, "DELETE", fmt.Sprintf("%s/events/%d", root, r.id()), "editor", nil)
			trashed = append(trashed, r.id())
		} else {
			live = append(live, r.id())
		}
	}
	e.flush()
	window := "start_date=2029-12-01&end_date=2030-02-01"
	ids := func(r *resp) []int64 {
		var out []int64
		for _, it := range r.path("events").([]any) {
			n, _ := it.(map[string]any)["id"].(json.Number).Int64()
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name, query, as string
		status          int
		want            []int64
	}{
		{"editor, trash only", "status=trash", "editor", 200, trashed},
		{"editor, publish and trash", "status=publish,trash", "editor", 200, append(slices.Clone(live), trashed...)},
		{"editor, every status", "status=publish,future,draft,pending,private,trash", "editor", 200, append(slices.Clone(live), trashed...)},
		{"editor, no status: no trash", "", "editor", 200, live},
		{"admin, trash only", "status=trash", "admin", 200, trashed},
		{"contributor, trash (edit_posts)", "status=trash", "contributor", 200, trashed},
		{"anonymous, no status", "", "", 200, live},
		{"anonymous, trash", "status=trash", "", 400, nil},
		{"anonymous, publish and trash", "status=publish,trash", "", 400, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := window
			if tc.query != "" {
				q += "&" + tc.query
			}
			r := e.must(tc.status, "GET", root+"/events?"+q, tc.as, nil)
			if tc.status != 200 {
				if r.str("code") != "rest_invalid_param" {
					t.Errorf("code %q, want rest_invalid_param", r.str("code"))
				}
				return
			}
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if got := ids(r); !slices.Equal(got, want) {
				t.Errorf("listed %v, want %v", got, want)
			}
			if int(r.num("total")) != len(want) || r.header.Get("X-TEC-Total") != fmt.Sprint(len(want)) {
				t.Errorf("total %v (X-TEC-Total %s), want %d", r.num("total"), r.header.Get("X-TEC-Total"), len(want))
			}
			for _, it := range r.path("events").([]any) {
				ev := it.(map[string]any)
				id, _ := ev["id"].(json.Number).Int64()
				if slices.Contains(trashed, id) && ev["status"] != "trash" {
					t.Errorf("trashed event %v listed with status %v", ev["id"], ev["status"])
				}
			}
		})
	}
	// Restoring an event takes it out of the trash list.
	e.must(http.StatusOK, "POST", fmt.Sprintf("%s/events/%d", root, trashed[0]), "editor", map[string]any{"status": "publish"})
	e.flush()
	r := e.must(http.StatusOK, "GET", root+"/events?"+window+"&status=trash", "editor", nil)
	if got := ids(r); slices.Contains(got, trashed[0]) || len(got) != len(trashed)-1 {
		t.Errorf("after restoring %d the trash lists %v", trashed[0], got)
	}
}
