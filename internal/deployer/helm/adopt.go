package helm

import (
	"encoding/json"
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
// Landscaper DeployItem, or moved from a helm_release, upgrades the
// release that installed what it takes over: the config names the same
// release, and it is there, with a record that is not pending (helm would
// otherwise drop the pending records and install anew). Installing would
// be a second release beside the adopted objects, or a re-creation of
// them: neither is a take-over.
func checkAdoptable(ac *action.Configuration, c *Config, a *deployer.Adoption) error {
	if err := adoptionMismatch(c, a); err != nil {
		return err
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
	return core.Terminal(ReasonAdopt, fmt.Sprintf("helm release %s/%s, which %s installed, is not there: an adopting item upgrades that release and never installs one",
		c.Namespace, c.Name, a.From()), core.CodeConfigurationProblem)
}

// adoptionMismatch is the part of checkAdoptable the config alone
// decides: the release it names is the adopted one.
func adoptionMismatch(c *Config, a *deployer.Adoption) error {
	if r := a.Release; r != nil && (r.Name != c.Name || r.Namespace != c.Namespace) {
		return core.ConfigurationProblem("the item adopts helm release %s/%s, which %s installed, but its config names release %s/%s; adopting a release never renames it",
			r.Namespace, r.Name, a.From(), c.Namespace, c.Name)
	}
	return nil
}

// CheckAdoption tells at plan time whether config can adopt a: the
// release it names must be the adopted one (deployer.AdoptionChecker).
func (d *Deployer) CheckAdoption(config json.RawMessage, a *deployer.Adoption) error {
	c, err := parseConfig(config)
	if err != nil && !deployer.IsWarning(err) {
		return nil // the config's own check reports it
	}
	if !c.helmDeployment() {
		return nil
	}
	return adoptionMismatch(c, a)
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
