package privatestate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func TestRoundTripKeepsBlobsRaw(t *testing.T) {
	blob := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1000)
	data, err := Encode(map[string]string{"phase": "Succeeded"}, map[string][]byte{"b": blob, "a": []byte("x"), "empty": nil})
	if err != nil {
		t.Fatal(err)
	}
	// The blob is stored once, raw: no base64 layer inflates it.
	if len(data) > len(blob)+64 {
		t.Fatalf("encoded %d bytes for a %d-byte blob", len(data), len(blob))
	}
	doc, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Version != Version || string(doc.JSON) != `{"phase":"Succeeded"}` || len(doc.Blobs) != 2 ||
		!bytes.Equal(doc.Blobs["b"], blob) || string(doc.Blobs["a"]) != "x" {
		t.Fatalf("decoded %+v", doc)
	}
	again, _ := Encode(map[string]string{"phase": "Succeeded"}, map[string][]byte{"a": []byte("x"), "b": blob})
	if !bytes.Equal(again, data) {
		t.Fatal("equal contents must encode to equal bytes")
	}
}

func TestDecodeReadsTheFrameworkEraFormat(t *testing.T) {
	legacy, _ := json.Marshal(map[string][]byte{"engine_status": []byte(`{"status":{"phase":"Failed"}}`)})
	doc, err := Decode(legacy)
	if err != nil || doc.Version != 0 || string(doc.JSON) != `{"status":{"phase":"Failed"}}` {
		t.Fatalf("%+v %v", doc, err)
	}
	if !strings.Contains(string(legacy), base64.StdEncoding.EncodeToString([]byte(`{"status"`))[:8]) {
		t.Fatal("fixture is not in the framework's base64 format")
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	good, _ := Encode(map[string]int{"a": 1}, map[string][]byte{"k": []byte("value")})
	cases := map[string][]byte{
		"unknown format": []byte("garbage"),
		"newer version":  append([]byte("LSPS"), 9),
		"truncated":      good[:len(good)-2],
		"trailing":       append(append([]byte(nil), good...), 0),
		"bad legacy":     []byte("{not json"),
	}
	for name, data := range cases {
		if _, err := Decode(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if doc, err := Decode(nil); err != nil || doc.JSON != nil {
		t.Fatalf("empty: %+v %v", doc, err)
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := Encode(map[string]int{"a": 1}, map[string][]byte{"k": []byte("value")})
	f.Add(good)
	f.Add([]byte(`{"engine_status":"e30="}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Decode(data) // must not panic
	})
}
