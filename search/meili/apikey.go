package meili

import (
	"context"
	"errors"
	"slices"

	"github.com/meilisearch/meilisearch-go"
)

// ServiceKeyUID is the fixed UID of the service's own API key. Meilisearch
// derives a key's value from its UID and the master key, so the value is
// the same every time the key is created again.
const ServiceKeyUID = "4f0b6a52-2f4e-4c9b-8d55-6c1f3e0a9b17"

// ServiceKeyActions are the actions the engine uses, and all the service's
// key allows: no key management, no dumps or snapshots, no access to other
// indexes.
var ServiceKeyActions = []string{
	"search", "documents.add", "documents.get", "documents.delete",
	"indexes.create", "indexes.get", "indexes.update", "indexes.delete", "indexes.swap",
	"settings.get", "settings.update", "stats.get", "tasks.get", "version",
}

// EnsureServiceKey connects to the Meilisearch server at url with its
// master key and returns the service's API key: ServiceKeyActions on the
// indexes whose UID starts with indexPrefix (DefaultIndexPrefix when
// empty), never expiring. It creates the key when it does not exist, and
// creates it again when its actions or indexes differ (the value stays the
// same). The master key is used for nothing else.
func EnsureServiceKey(ctx context.Context, url, masterKey, indexPrefix string) (string, error) {
	if indexPrefix == "" {
		indexPrefix = DefaultIndexPrefix
	}
	client := meilisearch.New(url, meilisearch.WithAPIKey(masterKey), meilisearch.DisableRetries())
	defer client.Close()
	e := newEngine(&core{client: client})
	want := &meilisearch.Key{
		UID:         ServiceKeyUID,
		Name:        "eventcal",
		Description: "the event-calendar service (created from the master key at start)",
		Actions:     ServiceKeyActions,
		Indexes:     []string{indexPrefix + "*"},
	}
	key, err := client.GetKeyWithContext(ctx, ServiceKeyUID)
	switch {
	case apiCode(err) == "api_key_not_found":
	case err != nil:
		return "", e.fail("get the service API key", err)
	case sameSet(key.Actions, want.Actions) && slices.Equal(key.Indexes, want.Indexes) && key.ExpiresAt.IsZero():
		return key.Key, nil
	default:
		if _, err := client.DeleteKeyWithContext(ctx, ServiceKeyUID); err != nil {
			return "", e.fail("replace the service API key", err)
		}
	}
	key, err = client.CreateKeyWithContext(ctx, want)
	if err != nil {
		return "", e.fail("create the service API key", err)
	}
	if key.Key == "" {
		return "", errors.New("meili: create the service API key: no key in the answer")
	}
	return key.Key, nil
}
