//go:build unix

package testenv

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// MetricSum is the sum of the API server's samples of the metric name
// (apiserver_request_total, say) whose labels hold every one of labels
// (`resource="configmaps"`, `verb="LIST"`), read from its /metrics: what a
// benchmark counts (requests, bytes) whatever the machine's load.
func (e *Env) MetricSum(ctx context.Context, name string, labels ...string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.Host()+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := e.HTTPClient().Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		end := strings.LastIndexByte(rest, '}')
		if end < 0 {
			continue
		}
		have := "," + rest[:end] + ","
		matches := true
		for _, l := range labels {
			if !strings.Contains(have, ","+l+",") {
				matches = false
				break
			}
		}
		if !matches {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[end+1:]), 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}
