package access_test

import (
	"testing"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

func TestKeyring_Authenticate(t *testing.T) {
	ring, err := access.NewKeyring([]access.KeySpec{
		{Name: "agent-host", SHA256: access.HashKey("s3cret-agent"), Trusted: true},
		{Name: "ops", SHA256: access.HashKey("s3cret-ops"), Trusted: true, Admin: true},
		{Name: "plugin", SHA256: access.HashKey("s3cret-plugin")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ring.DevMode() {
		t.Fatal("a keyring with keys is in dev mode")
	}
	allowed := map[string]access.Host{
		"s3cret-agent":  {Name: "agent-host", Trusted: true},
		"s3cret-ops":    {Name: "ops", Trusted: true, Admin: true},
		"s3cret-plugin": {Name: "plugin"},
	}
	for key, want := range allowed {
		got, err := ring.Authenticate(key)
		if err != nil || got != want {
			t.Errorf("Authenticate(%q) = %+v, %v; want %+v", key, got, err, want)
		}
	}
	denied := []string{"", "s3cret", "s3cret-agent ", "S3CRET-AGENT", access.HashKey("s3cret-agent")}
	for _, key := range denied {
		if got, err := ring.Authenticate(key); graph.ErrorCode(err) != graph.EUNAUTHENTICATED {
			t.Errorf("Authenticate(%q) = %+v, %v; want %s", key, got, err, graph.EUNAUTHENTICATED)
		}
	}
}

func TestKeyring_DevMode(t *testing.T) {
	ring, err := access.NewKeyring(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "anything"} {
		got, err := ring.Authenticate(key)
		if err != nil || got != access.DevHost {
			t.Errorf("dev mode Authenticate(%q) = %+v, %v; want DevHost", key, got, err)
		}
	}
}

func TestNewKeyring_ErrInvalid(t *testing.T) {
	for _, hash := range []string{"", "abc", access.HashKey("x") + "00", "zz" + access.HashKey("x")[2:]} {
		if _, err := access.NewKeyring([]access.KeySpec{{Name: "k", SHA256: hash}}); err == nil {
			t.Errorf("NewKeyring accepted sha256 %q", hash)
		}
	}
}
