package calendar

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

// dumpWebhooks returns every webhook endpoint of the store as text.
func dumpWebhooks(t *testing.T, st repository.Store) string {
	t.Helper()
	hooks, err := st.ListWebhooks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, w := range hooks {
		fmt.Fprintf(&b, "%+v\n", *w)
	}
	return b.String()
}

// TestWebhookCommandsRefuse sends webhook commands refused at each step
// the service checks (the fields, the caller, the record, the limit), on
// both stores: each answers the API error of its step, and the endpoints
// are exactly as before.
func TestWebhookCommandsRefuse(t *testing.T) {
	ctx := context.Background()
	s := func(v string) *string { return &v }
	evs := func(v ...string) *[]string { return &v }
	bad := func(name string) refusal { return refusal{400, "rest_invalid_param", name} }
	forbidden := refusal{403, "rest_forbidden", ""}
	notFound := refusal{404, "webhook_not_found", ""}
	for engine, open := range openStores(t) {
		t.Run(engine, func(t *testing.T) {
			st := open(t)
			now := time.Unix(2e9, 0)
			svc := NewWebhooks(WebhooksDeps{Store: st, Now: func() time.Time { return now }})
			hook, err := svc.Create(ctx, admin, &WebhookInput{URL: s(" https://hooks.example/a "), Events: evs("event.created", "event.created", "tag.deleted")})
			if err != nil {
				t.Fatal(err)
			}
			if hook.URL != "https://hooks.example/a" || len(hook.Events) != 2 || !hook.Active || !strings.HasPrefix(hook.Secret, "whsec_") {
				t.Fatalf("created %+v", hook)
			}
			cases := []struct {
				name string
				run  func() error
				want refusal
			}{
				{"create without a URL", func() error { _, err := svc.Create(ctx, admin, &WebhookInput{}); return err },
					refusal{400, "rest_missing_callback_param", "url"}},
				{"create with a private URL", func() error {
					_, err := svc.Create(ctx, admin, &WebhookInput{URL: s("http://127.0.0.1/x")})
					return err
				}, bad("url")},
				{"create with an ftp URL", func() error {
					_, err := svc.Create(ctx, admin, &WebhookInput{URL: s("ftp://hooks.example/x")})
					return err
				}, bad("url")},
				{"create with an unknown message type", func() error {
					_, err := svc.Create(ctx, admin, &WebhookInput{URL: s("https://hooks.example/b"), Events: evs("event.exploded")})
					return err
				}, bad("events")},
				{"create with no message type", func() error {
					_, err := svc.Create(ctx, admin, &WebhookInput{URL: s("https://hooks.example/b"), Events: evs()})
					return err
				}, bad("events")},
				{"create with a weak secret", func() error {
					_, err := svc.Create(ctx, admin, &WebhookInput{URL: s("https://hooks.example/b"), Secret: s("whsec_c2hvcnQ=")})
					return err
				}, bad("secret")},
				{"create with a description too long", func() error {
					_, err := svc.Create(ctx, admin, &WebhookInput{URL: s("https://hooks.example/b"), Description: s(strings.Repeat("d", MaxWebhookDescription+1))})
					return err
				}, bad("description")},
				{"editor creates", func() error {
					_, err := svc.Create(ctx, editor, &WebhookInput{URL: s("https://hooks.example/b")})
					return err
				}, forbidden},
				{"update with a private URL", func() error {
					_, err := svc.Update(ctx, admin, hook.ID, &WebhookInput{URL: s("http://localhost/x")})
					return err
				}, bad("url")},
				{"editor updates", func() error {
					_, err := svc.Update(ctx, editor, hook.ID, &WebhookInput{Description: s("x")})
					return err
				}, forbidden},
				{"update an unknown endpoint", func() error {
					_, err := svc.Update(ctx, admin, 999999, &WebhookInput{Description: s("x")})
					return err
				}, notFound},
				{"editor deletes", func() error { _, err := svc.Delete(ctx, editor, hook.ID); return err }, forbidden},
				{"delete an unknown endpoint", func() error { _, err := svc.Delete(ctx, admin, 999999); return err }, notFound},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					before := dumpWebhooks(t, st)
					checkRefusal(t, tc.run(), tc.want)
					if after := dumpWebhooks(t, st); after != before {
						t.Errorf("a refused command changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
					}
				})
			}
			t.Run("update and delete", func(t *testing.T) {
				now = now.Add(time.Hour)
				off := false
				got, err := svc.Update(ctx, admin, hook.ID, &WebhookInput{Active: &off, Description: s("paused")})
				if err != nil {
					t.Fatal(err)
				}
				if got.Active || got.DisabledReason != "disabled by an admin" || got.Description != "paused" || !got.Updated.Equal(now) || got.URL != hook.URL {
					t.Errorf("updated %+v", got)
				}
				gone, err := svc.Delete(ctx, admin, hook.ID)
				if err != nil || gone.ID != hook.ID {
					t.Fatalf("delete: %+v, %v", gone, err)
				}
				if dump := dumpWebhooks(t, st); dump != "" {
					t.Errorf("left after delete: %s", dump)
				}
			})
		})
	}
}

// TestWebhookLimit: a registry holding MaxWebhooks endpoints refuses one
// more (400 webhook_limit) and stays as it was.
func TestWebhookLimit(t *testing.T) {
	ctx := context.Background()
	st := openStores(t)["sqlite"](t)
	svc := NewWebhooks(WebhooksDeps{Store: st})
	for i := range MaxWebhooks {
		u := fmt.Sprintf("https://hooks.example/%d", i)
		if _, err := svc.Create(ctx, admin, &WebhookInput{URL: &u}); err != nil {
			t.Fatal(err)
		}
	}
	before := dumpWebhooks(t, st)
	u := "https://hooks.example/one-more"
	_, err := svc.Create(ctx, admin, &WebhookInput{URL: &u})
	checkRefusal(t, err, refusal{400, "webhook_limit", ""})
	if after := dumpWebhooks(t, st); after != before {
		t.Error("a refused create changed the store")
	}
}
