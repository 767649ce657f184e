// Package privatestate is the versioned format in which resources keep what
// users need not see (engine statuses, applied hashes, deployer state) in
// Terraform's private state.
//
// Terraform stores private state as opaque bytes, base64-encoded once in the
// state file. The format keeps binary blobs (exec's packed STATE_PATH, say)
// as raw bytes beside a JSON document, so a blob is encoded once, by
// Terraform, instead of once more per JSON layer around it.
//
//	"LSPS" | version (1 byte) | flags (1 byte, version 2) | uvarint len(doc) | doc
//	       | uvarint count | count × (uvarint len(key) | key | uvarint len(blob) | blob)
//
// The doc is JSON, DEFLATE-compressed when flags has bit 0 set (version 2
// compresses documents of 1 KiB and more). Blobs are sorted by key, so
// equal contents encode to equal bytes.
//
// Compression is for Terraform: it keeps private state in the state file
// and hands it to every plan, and the status of a thousand deploy items
// repeats its job IDs and field names a thousand times.
package privatestate

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
)

// Version is the format version this package writes.
const Version = 2

// flagDeflated marks a compressed document.
const flagDeflated = 1

// compressFrom is the document size from which compression pays.
const compressFrom = 1 << 10

var magic = []byte("LSPS")

// Document is a decoded private state: a JSON document and named blobs.
type Document struct {
	// Version is the format version it was read from: 0 for the
	// framework-era format, which only Decode understands.
	Version int
	JSON    json.RawMessage
	Blobs   map[string][]byte
}

// Encode writes doc (marshalled to JSON) and blobs. Empty blobs are left
// out: they read back as missing, which callers treat alike.
func Encode(doc any, blobs map[string][]byte) ([]byte, error) {
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(magic)
	b.WriteByte(Version)
	var flags byte
	if len(js) >= compressFrom {
		var z bytes.Buffer
		w, _ := flate.NewWriter(&z, flate.BestSpeed) // the level is valid
		_, _ = w.Write(js)
		if err := w.Close(); err != nil {
			return nil, err
		}
		js, flags = z.Bytes(), flagDeflated
	}
	b.WriteByte(flags)
	putBytes(&b, js)
	keys := slices.Sorted(maps.Keys(blobs))
	keys = slices.DeleteFunc(keys, func(k string) bool { return len(blobs[k]) == 0 })
	putUvarint(&b, uint64(len(keys)))
	for _, k := range keys {
		putBytes(&b, []byte(k))
		putBytes(&b, blobs[k])
	}
	return b.Bytes(), nil
}

// legacyKey is where the framework-era format (version 0: a JSON object
// of base64 values, written by terraform-plugin-framework's private state)
// kept the engine status.
const legacyKey = "engine_status"

// Decode reads private state. Empty input is an empty document. The
// framework-era format is read too, so state written by earlier releases
// upgrades in place: its document is the JSON it stored, without blobs.
func Decode(data []byte) (Document, error) {
	switch {
	case len(data) == 0:
		return Document{Version: Version}, nil
	case bytes.HasPrefix(data, magic):
		return decodeCurrent(data[len(magic):])
	case data[0] == '{':
		var keys map[string][]byte
		if err := json.Unmarshal(data, &keys); err != nil {
			return Document{}, fmt.Errorf("private state of version 0 is not readable: %w", err)
		}
		return Document{Version: 0, JSON: keys[legacyKey]}, nil
	}
	return Document{}, errors.New("private state is in an unknown format")
}

// Blobs reads only the blobs of private state, leaving its document
// compressed: checks of a marker blob need not inflate a large status.
func Blobs(data []byte) (map[string][]byte, error) {
	if !bytes.HasPrefix(data, magic) {
		doc, err := Decode(data)
		return doc.Blobs, err
	}
	doc, err := decode(data[len(magic):], false)
	return doc.Blobs, err
}

func decodeCurrent(data []byte) (Document, error) { return decode(data, true) }

func decode(data []byte, inflate bool) (Document, error) {
	r := bytes.NewReader(data)
	v, err := r.ReadByte()
	if err != nil {
		return Document{}, errors.New("private state is truncated")
	}
	if v < 1 || v > Version {
		return Document{}, fmt.Errorf("private state has format version %d; this provider reads versions 0 to %d, so it is older than the one that wrote it", v, Version)
	}
	doc := Document{Version: int(v)}
	var flags byte
	if v >= 2 {
		if flags, err = r.ReadByte(); err != nil {
			return Document{}, errors.New("private state is truncated")
		}
	}
	if doc.JSON, err = getBytes(r); err != nil {
		return Document{}, err
	}
	if flags&flagDeflated != 0 && inflate {
		if doc.JSON, err = io.ReadAll(flate.NewReader(bytes.NewReader(doc.JSON))); err != nil {
			return Document{}, fmt.Errorf("private state's document cannot be decompressed: %w", err)
		}
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n > uint64(r.Len()) {
		return Document{}, errors.New("private state is truncated")
	}
	if n > 0 {
		doc.Blobs = make(map[string][]byte, n)
	}
	for range n {
		k, err := getBytes(r)
		if err != nil {
			return Document{}, err
		}
		val, err := getBytes(r)
		if err != nil {
			return Document{}, err
		}
		doc.Blobs[string(k)] = val
	}
	if r.Len() != 0 {
		return Document{}, errors.New("private state has trailing bytes")
	}
	return doc, nil
}

func putUvarint(b *bytes.Buffer, n uint64) {
	b.Write(binary.AppendUvarint(nil, n))
}

func putBytes(b *bytes.Buffer, p []byte) {
	putUvarint(b, uint64(len(p)))
	b.Write(p)
}

func getBytes(r *bytes.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil || n > uint64(r.Len()) {
		return nil, errors.New("private state is truncated")
	}
	p := make([]byte, n)
	_, _ = r.Read(p)
	return p, nil
}
