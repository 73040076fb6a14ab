package tenantgateway

import gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"

// ObjectLabels are the labels of every object derived from the TenantGateway
// tgw: cozystack.io/gateway=<tgw>, cozystack.io/tenantgateway=<tgw> (the
// label upstream Cozystack's controller writes), and
// cozystack.io/managed-by=<managedBy> when managedBy is set. A fresh map each
// call.
func ObjectLabels(tgw, managedBy string) map[string]string {
	l := map[string]string{gatewayv1alpha1.LabelGateway: tgw, gatewayv1alpha1.LabelTenantGateway: tgw}
	if managedBy != "" {
		l[gatewayv1alpha1.LabelManagedBy] = managedBy
	}
	return l
}
