package installation

import (
	"bytes"
	"encoding/json"
)

// decodeJSON turns an export into a plain value for templates; no export
// (or one that is not JSON) is nil.
func decodeJSON(raw json.RawMessage) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}
