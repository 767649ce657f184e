package privatestate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
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
	large, _ := Encode(map[string]string{"a": strings.Repeat("status ", 400)}, nil)
	f.Add(large)
	f.Add([]byte(`{"engine_status":"e30="}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Decode(data) // must not panic
	})
}

// A large document is stored compressed and reads back as it was; a small
// one is stored as it is. State of format version 1 (never compressed)
// still reads.
func TestLargeDocumentsAreCompressed(t *testing.T) {
	items := map[string]map[string]string{}
	for i := range 1000 {
		items[fmt.Sprintf("sub-%d/item-%d", i/20, i%20)] = map[string]string{
			"phase": "Succeeded", "jobIDFinished": "f1b54b20-932a-4b86-9286-ca6e562b533c"}
	}
	js, _ := json.Marshal(items)
	data, err := Encode(items, map[string][]byte{"k": []byte("raw")})
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > len(js)/5 {
		t.Errorf("encoded %d bytes for a %d-byte document; want it compressed", len(data), len(js))
	}
	if blobs, err := Blobs(data); err != nil || string(blobs["k"]) != "raw" {
		t.Fatalf("blobs alone: %v %v", blobs, err)
	}
	doc, err := Decode(data)
	if err != nil || string(doc.JSON) != string(js) || string(doc.Blobs["k"]) != "raw" {
		t.Fatalf("round trip: %v, %d bytes of JSON, blobs %v", err, len(doc.JSON), doc.Blobs)
	}
	small, _ := Encode(map[string]int{"a": 1}, nil)
	if !bytes.Contains(small, []byte(`{"a":1}`)) {
		t.Errorf("a small document is not stored as it is: %q", small)
	}
	v1 := append([]byte("LSPS\x01\x07"), `{"a":1}`...)
	v1 = append(v1, 1, 1, 'k', 1, 'v')
	if doc, err := Decode(v1); err != nil || doc.Version != 1 || string(doc.JSON) != `{"a":1}` || string(doc.Blobs["k"]) != "v" {
		t.Fatalf("version 1: %+v %v", doc, err)
	}
	damaged := slices.Clone(data)
	damaged[10] ^= 0xff
	if _, err := Decode(damaged); err == nil {
		t.Error("a damaged compressed document is accepted")
	}
}
