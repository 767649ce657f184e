package helm

import (
	"errors"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
)

// ReasonAdopt is the reason of errors of taking a Landscaper DeployItem's
// release over.
const ReasonAdopt = "AdoptRelease"

// checkAdoptable makes sure the first run of an item imported from a
// Landscaper DeployItem upgrades the release that DeployItem installed:
// the config names the same release, and it is there, with a record that
// is not pending (helm would otherwise drop the pending records and
// install anew). Installing would be a second release beside Landscaper's
// objects, or a re-creation of them: neither is a take-over.
func checkAdoptable(ac *action.Configuration, c *Config, a *deployer.Adoption) error {
	if r := a.Release; r != nil && (r.Name != c.Name || r.Namespace != c.Namespace) {
		return core.ConfigurationProblem("the item is imported from Landscaper's DeployItem %s, which installed helm release %s/%s, but its config names release %s/%s; adopting a release never renames it",
			a.DeployItem, r.Namespace, r.Name, c.Namespace, c.Name)
	}
	hist, err := ac.Releases.History(c.Name)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return kubeError("GetRelease", err)
	}
	for _, r := range hist {
		if r.Namespace == c.Namespace && (r.Info == nil || !r.Info.Status.IsPending()) {
			return nil
		}
	}
	return core.Terminal(ReasonAdopt, fmt.Sprintf("helm release %s/%s, which Landscaper's DeployItem %s installed, is not there: an imported item upgrades that release and never installs one",
		c.Namespace, c.Name, a.DeployItem), core.CodeConfigurationProblem)
}

// adoptedState is the manifest machinery's state of a helmDeployment:
// false item: on its first run after its import, the objects the
// DeployItem managed (see kube.Adopted).
func adoptedState(st state, a *deployer.Adoption) kube.State {
	if st.Kube != nil {
		return *st.Kube
	}
	return kube.Adopted(kube.State{}, a)
}
