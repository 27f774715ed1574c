# Shared by every package; outside any package, so never read for pins.
CABPK_COMPONENTS_SHA256 = 0000000000000000000000000000000000000000000000000000000000000000
LEAKED_VERSION = v9.9.9
LEAKED_URL = https://example.com/leaked.yaml
