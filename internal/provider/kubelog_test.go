package provider

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"k8s.io/klog/v2"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
)

func TestTFLogLoggerCarriesLibraryLogs(t *testing.T) {
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	l := newTFLogLogger(ctx)
	l.Named("helm").With("release", "r").Info("installing", "objects", 2)
	l.Trace("fine detail")

	target.SetLogger(l)
	defer target.SetLogger(newTFLogLogger(context.Background()))
	klog.V(2).Info("client-go says hello")
	klog.V(8).Info("response body with secret data")
	klog.Flush()

	entries, err := tflogtest.MultilineJSONDecode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, fmt.Sprintf("%v|%v|%v|%v|%v|%v", e["@level"], e["@module"], e["@message"], e["logger"], e["release"], e["objects"]))
	}
	want := []string{
		"debug|provider.kubernetes|installing|helm|r|2",
		"trace|provider.kubernetes|fine detail|<nil>|<nil>|<nil>",
		"debug|provider.kubernetes|client-go says hello|<nil>|<nil>|<nil>",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("log entries\n%v\nwant\n%v", got, want)
	}
}
