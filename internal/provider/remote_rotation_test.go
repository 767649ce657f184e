package provider

import (
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
)

func reviewObjects(t *testing.T, ns string, secret map[string]any) []lscluster.Object {
	t.Helper()
	s := lscluster.Spec{Namespace: ns, Name: "app", Files: map[string][]byte{"blueprint.yaml": []byte("kind: Blueprint\n")},
		SecretData: secret}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func reviewRecords(objs []lscluster.Object) *remoteState {
	rs := &remoteState{Target: "ls", Namespace: objs[0].Ref().Namespace}
	for _, o := range objs {
		rs.Objects = append(rs.Objects, o.Record())
	}
	return rs
}

// A changed sensitive import whose name holds ".target." was taken for a
// rotated target credential (the remote review's F5): the plan kept every
// computed attribute and the apply started no job. A Target's Secret is
// the one a Target of its name refers to.
func TestSensitiveImportChangeIsNoRotation(t *testing.T) {
	prev := reviewRecords(reviewObjects(t, "ls", map[string]any{"db.target.password": "old"}))
	changed, rotation := prev.changedObjects(reviewObjects(t, "ls", map[string]any{"db.target.password": "new"}))
	if rotation {
		t.Errorf("a changed sensitive import %v is planned as a credential rotation: no job runs", changed)
	}
}
