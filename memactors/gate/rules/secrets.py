"""Secrets with a shape of their own: provider keys by documented prefix, JWTs, private-key
blocks, credentials in URLs and in Authorization headers: restricted (blocked by default); a
password's stored hash: confidential (redacted).
Secrets known only by their name or their randomness are in ``generic_secrets``.

Patterns follow the gitleaks default config and detect-secrets' plugins (named in each rule's
``origin``), widened where a provider's format has several generations.
"""

from __future__ import annotations

import base64
import hashlib
import json
from .lazy import re

from ..disguise import base64_text
from ..tree import DOC
from .base import CONFIDENTIAL, RESTRICTED, SECRET, Ctx, Rule, found, has_token, regex_find, register, tokenish

_B = r"(?<![A-Za-z0-9])"  # not inside a longer word; "x-", "prod_" before a key do not hide it
_E = r"(?![A-Za-z0-9])"


def _provider(id: str, rx: str, triggers: tuple[str, ...], reason: str, origin: str, *, tokens: bool = True,
              placeholder: str = "[API_KEY]", trigger=None, check=None) -> None:
    """A key recognised by its prefix; ``tokens`` also asks the body to look generated (or
    ``check(text, match)`` asks what that provider's keys have)."""
    compiled = re.compile(rx, re.ASCII)
    if check is None and tokens:
        check = lambda t, m: tokenish(m.group(), 12)  # noqa: E731
    _SHAPES.append((compiled, check))
    register(Rule(id=id, category=SECRET, sensitivity=RESTRICTED, placeholder=placeholder, risk=1.0, binds=(DOC,),
                  find=regex_find(compiled, check=check), triggers=triggers, trigger=trigger, guard=has_token,
                  reason=reason, origin=origin))


_SHAPES: list = []  # (regex, check) of every key known by its shape: what a base64 wrapping is opened for
_DISCORD_SHAPE = found(r"\.[A-Za-z0-9_\-]{6}\.")


_provider("secret.anthropic", _B + r"sk-ant-[A-Za-z0-9_\-]{20,}" + _E, ("sk-ant-",),
          "Anthropic API key (sk-ant- prefix)", "gitleaks anthropic-api-key / anthropic-admin-api-key, prefix only")
# The body must not be a hyphenated phrase ("sk-learn-based-ranking"): see tokenish().
_provider("secret.openai", _B + r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}" + _E, ("sk-",),
          "OpenAI API key (sk-, sk-proj-, sk-svcacct- prefix)",
          "gitleaks openai-api-key, prefix only (its T3BlbkFJ marker not required); detect-secrets OpenAIDetector")
_provider("secret.github", _B + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})" + _E,
          ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), "GitHub token (ghp_/gho_/ghs_/ghu_/ghr_/github_pat_)",
          "gitleaks github-pat, github-oauth, github-app-token, github-refresh-token, github-fine-grained-pat",
          tokens=False)
_provider("secret.gitlab", _B + r"(?:(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-|GR1348941)"
          r"[A-Za-z0-9_\-]{20,}" + _E, ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-",
                                         "glagent-", "gloas-", "GR1348941"),
          "GitLab token (glpat- and the other gl*- prefixes)", "gitleaks gitlab-pat etc.; detect-secrets GitLabTokenDetector",
          tokens=False)
# AWS's documentation writes its examples with EXAMPLE at the end (AKIAIOSFODNN7EXAMPLE and the
# secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY): published samples, not anyone's key (gitleaks
# allows the same suffix). A real key id is random base32 and never ends so.
_provider("secret.aws_access_key_id", r"(?<![A-Z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])",
          ("AKIA", "ASIA", "A3T", "ABIA", "ACCA"), "AWS access key id (AKIA/ASIA/... + 16)",
          "gitleaks aws-access-token (its EXAMPLE allowlist); detect-secrets AWSKeyDetector",
          check=lambda t, m: not _aws_example(m.group()))
_provider("secret.google_api_key", _B + r"AIza[0-9A-Za-z_\-]{33,37}" + _E, ("AIza",), "Google API key (AIza + 35)",
          "gitleaks gcp-api-key", tokens=False)
_provider("secret.slack", _B + r"(?:xox[abprse]-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9]+-[0-9]+-[A-Za-z0-9]{16,})" + _E,
          ("xox", "xapp-"), "Slack token (xoxb-/xoxp-/xapp-/...)",
          "gitleaks slack-bot-token, slack-user-token, slack-app-token; detect-secrets SlackDetector", tokens=False)
_provider("secret.slack_webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{20,}",
          ("hooks.slack.com",), "Slack incoming-webhook URL", "gitleaks slack-webhook-url", tokens=False)
_provider("secret.stripe", _B + r"(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/]{24,})" + _E,
          ("sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_", "whsec_"),
          "Stripe secret or restricted key, or webhook signing secret (sk_live_/rk_live_/whsec_)",
          "gitleaks stripe-access-token; detect-secrets StripeDetector",
          tokens=False)
_provider("secret.sendgrid", _B + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E, ("SG.",), "SendGrid API key",
          "gitleaks sendgrid-api-token; detect-secrets SendGridDetector", tokens=False)
_provider("secret.twilio", r"(?<![A-Za-z0-9])(?:AC|SK)[0-9a-f]{32}(?![A-Za-z0-9])", ("AC", "SK"),
          "Twilio account SID / API key (AC/SK + 32 hex)", "gitleaks twilio-api-key; detect-secrets TwilioKeyDetector",
          tokens=False)
_provider("secret.npm", _B + r"npm_[A-Za-z0-9]{36}" + _E, ("npm_",), "npm access token", "gitleaks npm-access-token")
_provider("secret.pypi", r"pypi-AgE[A-Za-z0-9_\-]{50,}", ("pypi-AgE",), "PyPI upload token",
          "gitleaks pypi-upload-token; detect-secrets PypiTokenDetector", tokens=False)
_provider("secret.telegram", r"(?<![0-9])[0-9]{8,10}:A[A-Za-z0-9_\-]{32,36}" + _E, (":A",),
          "Telegram bot token", "gitleaks telegram-bot-api-token; detect-secrets TelegramBotTokenDetector",
          tokens=False)
_provider("secret.discord", _B + r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}" + _E,
          (), "Discord bot token", "detect-secrets DiscordBotTokenDetector",
          trigger=_DISCORD_SHAPE)
_provider("secret.mailchimp", _B + r"[0-9a-f]{32}-us[0-9]{1,2}" + _E, ("-us",), "Mailchimp API key",
          "gitleaks mailchimp-api-key; detect-secrets MailchimpDetector", tokens=False)
# Square's access tokens: "sq0atp-" (OAuth) or "EAAA" and 60 more ("EAAA" alone starts words: the body is
# asked to look generated)
_provider("secret.square", _B + r"(?:sq0(?:csp|atp)-[A-Za-z0-9_\-]{22,43}|EAAA[A-Za-z0-9_\-]{60})" + _E,
          ("sq0", "EAAA"),
          "Square access token or OAuth secret (sq0atp-/sq0csp-/EAAA)",
          "gitleaks square-access-token; detect-secrets SquareOAuthDetector",
          check=lambda t, m: m.group().startswith("sq0") or tokenish(m.group(), 12))
_provider("secret.azure_storage", r"AccountKey=[A-Za-z0-9+/]{86}==", ("AccountKey=",), "Azure storage account key",
          "detect-secrets AzureStorageKeyDetector", tokens=False)
# HuggingFace user and org tokens: 34 letters after the prefix; a real one mixes cases (so a
# lower-case identifier like hf_tokenizer... of that length is not one).
_provider("secret.huggingface", _B + r"(?:hf_|api_org_)[A-Za-z]{34}" + _E, ("hf_", "api_org_"),
          "HuggingFace access token (hf_/api_org_ + 34 letters)",
          "gitleaks huggingface-access-token, huggingface-organization-api-token", tokens=False,
          check=lambda t, m: not m.group().islower() and not m.group().split("_")[-1].isupper())
_provider("secret.shopify", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E, ("shpat_", "shpca_", "shppa_", "shpss_"),
          "Shopify access token or shared secret (shpat_/shpca_/shppa_/shpss_)",
          "gitleaks shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, "
          "shopify-shared-secret", tokens=False)
_provider("secret.digitalocean", _B + r"do[opr]_v1_[a-f0-9]{64}" + _E, ("dop_v1_", "doo_v1_", "dor_v1_"),
          "DigitalOcean token (dop_v1_/doo_v1_/dor_v1_)",
          "gitleaks digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token", tokens=False)
_provider("secret.google_oauth", r"(?<![A-Za-z0-9/:])(?:GOCSPX-[A-Za-z0-9_\-]{28}|ya29\.[A-Za-z0-9_\-]{30,}"
          r"|1//0[A-Za-z0-9_\-]{40,})" + _E, ("GOCSPX-", "ya29.", "1//0"),
          "Google OAuth client secret (GOCSPX-), access token (ya29.) or refresh token (1//0)",
          "Google Cloud OAuth client-secret prefix GOCSPX- (2021 format); ya29. access tokens (gitleaks gcp rules, "
          "trufflehog GCP detectors)")
_provider("secret.artifactory", r"(?<![A-Za-z0-9])(?:AKCp[A-Za-z0-9]{10,}|cmVmd[A-Za-z0-9]{59})(?![A-Za-z0-9])",
          ("AKCp", "cmVmd"), "Artifactory API/reference token",
          "gitleaks artifactory-api-key, artifactory-reference-token; detect-secrets ArtifactoryDetector")
# Azure AD (Entra) client secrets since 2021: three characters, a digit, "Q~", 31 to 34 more.
_provider("secret.azure_client_secret", r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
          ("Q~",), "Azure AD client secret (xxxNQ~ + 31-34)", "gitleaks azure-ad-client-secret", tokens=False)
_provider("secret.vault", _B + r"hv[sb]\.[A-Za-z0-9_\-]{90,300}" + _E, ("hvs.", "hvb."),
          "HashiCorp Vault service or batch token (hvs./hvb.)", "gitleaks vault-service-token, vault-batch-token")
# The lengths below are the services' own with some slack either side: a prefix this distinctive with a
# generated body that is a few characters short or long (copied in part, a newer format) is the key still.
_provider("secret.groq", _B + r"gsk_[A-Za-z0-9]{40,64}" + _E, ("gsk_",), "Groq API key (gsk_ + 52)",
          "trufflehog groq detector")
_provider("secret.xai", _B + r"xai-[A-Za-z0-9_]{64,96}" + _E, ("xai-",), "xAI API key (xai- + 80)",
          "trufflehog xai detector")
_provider("secret.perplexity", _B + r"pplx-[A-Za-z0-9]{40,56}" + _E, ("pplx-",), "Perplexity API key (pplx- + 48)",
          "trufflehog perplexity detector")
_provider("secret.mailgun", _B + r"key-[a-f0-9]{32}" + _E, ("key-",), "Mailgun private API key (key- + 32 hex)",
          "gitleaks mailgun-private-api-token")
_provider("secret.atlassian", _B + r"ATATT3[A-Za-z0-9_\-=]{150,250}" + _E, ("ATATT3",),
          "Atlassian API token (ATATT3...)", "gitleaks atlassian-api-token (2022 format)")
_provider("secret.databricks", _B + r"dapi[a-h0-9]{32}(?:-\d)?" + _E, ("dapi",), "Databricks personal access token (dapi + 32)",
          "gitleaks databricks-api-token")
# Prefixed keys of services agents are often wired to (trufflehog's and gitleaks' detectors).
_provider("secret.doppler", _B + r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_\-]{1,40}\.)?[A-Za-z0-9]{40,44}" + _E,
          ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
          "Doppler token (dp.pt./dp.st./dp.sa./... + 40-44)", "gitleaks doppler-api-token; Doppler's service tokens")
_provider("secret.newrelic", _B + r"(?:NRAK-[A-Z0-9]{27}|NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9\-]{32})" + _E,
          ("NRAK-", "NRJS-", "NRII-"), "New Relic user API key, browser or insert key (NRAK-/NRJS-/NRII-)",
          "gitleaks new-relic-user-api-key, new-relic-browser-api-token, new-relic-insert-key")
_provider("secret.replicate", _B + r"r8_[A-Za-z0-9]{30,44}" + _E, ("r8_",), "Replicate API token (r8_ + 37)",
          "trufflehog replicate detector")
_provider("secret.langsmith", _B + r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}" + _E, ("lsv2_pt_", "lsv2_sk_"),
          "LangSmith API key (lsv2_pt_/lsv2_sk_)", "trufflehog langsmith detector")
_provider("secret.pinecone", _B + r"pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,80}" + _E, ("pcsk_",),
          "Pinecone API key (pcsk_)", "Pinecone's key format since 2024 (pcsk_<id>_<secret>)")
_provider("secret.flyio", _B + r"(?:fo1_[\w\-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})(?![A-Za-z0-9+/=])",
          ("fo1_", "fm1a_", "fm1r_", "fm2_"), "Fly.io access token (fo1_/fm1_/fm2_)", "gitleaks flyio-access-token")
_provider("secret.tailscale", _B + r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{8,}-[A-Za-z0-9]{20,}" + _E,
          ("tskey-",), "Tailscale auth, API or OAuth client key (tskey-...)", "trufflehog tailscale detector")
_provider("secret.heroku", _B + r"HRKU-AA[0-9A-Za-z_\-]{58}" + _E, ("HRKU-",), "Heroku API key (HRKU-AA + 58)",
          "gitleaks heroku-api-key-v2")
_provider("secret.terraform", _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}" + _E, (".atlasv1.",),
          "Terraform Cloud / Enterprise API token (<14>.atlasv1.<60-70>)", "gitleaks hashicorp-tf-api-token")
_provider("secret.circleci", _B + r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}" + _E, ("CCIPAT_",),
          "CircleCI personal API token (CCIPAT_)", "trufflehog circleci detector (v2 tokens)")
_provider("secret.docker", _B + r"dckr_pat_[A-Za-z0-9_\-]{27}" + _E, ("dckr_pat_",), "Docker Hub personal access token (dckr_pat_)",
          "gitleaks docker hub pat; Docker's dckr_pat_ prefix", tokens=False)
# More services' tokens, each by the prefix and shape its maker publishes (gitleaks' default rules,
# trufflehog's detectors), pasted alone: one rule, one table of (service, its literal prefixes for
# the pre-scan, "|"-joined, none where a prefix is a common word's start, shape).
_SERVICE_TOKENS = (
    ("1Password", "ops_eyJ", r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}"),
    ("1Password secret key", "A3-", r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}"
                                    r"-[A-Z0-9]{5}"),
    ("Adobe", "p8e-", r"p8e-[A-Za-z0-9]{32}"),
    ("Airtable", "", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    ("Amazon Bedrock", "ABSK", r"ABSK[A-Za-z0-9+/]{109,269}={0,2}"),
    ("Buildkite", "bkua_", r"bkua_[a-f0-9]{40}"),
    ("Clojars", "CLOJARS_", r"(?i:CLOJARS_[a-z0-9]{60})"),
    ("Cloudflare Origin CA", "", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    ("Contentful", "CFPAT-", r"CFPAT-[A-Za-z0-9_\-]{43}"),
    ("Duffel", "duffel_", r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}"),
    ("Dynatrace", "dt0c01.", r"(?i:dt0c01\.[a-z0-9]{24}\.[a-z0-9]{64})"),
    ("EasyPost", "EZAK|EZTK", r"EZ[AT]K[A-Za-z0-9]{54}"),
    ("Facebook", "EAA", r"EAA[MC][A-Za-z0-9]{100,}"),
    ("Figma", "figd_", r"figd_[A-Za-z0-9_\-]{40}"),
    ("Flutterwave", "FLWSECK", r"FLWSECK(?:_TEST)?-[a-hA-H0-9]{32}-X"),
    ("Frame.io", "fio-u-", r"fio-u-[A-Za-z0-9\-_=]{64}"),
    ("Grafana API key", "eyJrIjoi", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}"),
    ("Harness", "", r"(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    ("HubSpot", "pat-na1-|pat-eu1-", r"pat-(?:na|eu)1-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}"),
    ("Infracost", "ico-", r"ico-[A-Za-z0-9]{32}"),
    ("MaxMind", "_mmk", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk"),
    ("Netlify", "nfp_", r"nfp_[A-Za-z0-9_]{36}"),
    ("NuGet", "oy2", r"oy2[a-z0-9]{43}"),
    ("Octopus Deploy", "", r"API-[A-Z0-9]{26}"),
    ("OpenShift", "sha256~", r"sha256~[\w\-]{43}"),
    ("PlanetScale", "pscale_", r"pscale_(?:tkn|pw|oauth)_[\w=.\-]{32,64}"),
    ("Prefect", "pnu_", r"pnu_[A-Za-z0-9]{36}"),
    ("Pulumi", "pul-", r"pul-[a-f0-9]{40}"),
    ("ReadMe", "rdme_", r"rdme_[a-z0-9]{70}"),
    ("Render", "rnd_", r"rnd_[A-Za-z0-9]{32}"),
    ("RubyGems", "rubygems_", r"rubygems_[a-f0-9]{48}"),
    ("Scalingo", "tk-us-", r"tk-us-[\w\-]{48}"),
    ("Brevo (Sendinblue)", "xkeysib-", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("Sentry", "sntry", r"sntryu_[a-f0-9]{64}|sntrys_eyJpYXQiO[A-Za-z0-9+/]{10,200}={0,2}_[A-Za-z0-9+/]{43}"),
    ("SettleMint", "sm_aat_|sm_pat_|sm_sat_", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}"),
    ("Shippo", "shippo_", r"shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    ("Sourcegraph", "sgp_", r"sgp_(?:[a-fA-F0-9]{16}_)?[a-fA-F0-9]{40}"),
    ("Typeform", "tfp_", r"tfp_[A-Za-z0-9\-_.=]{59}"),
    ("Adafruit IO", "aio_", r"aio_[A-Za-z0-9]{28}"),
)
_provider("secret.service_token", _B + "(?:" + "|".join(rx for _, _, rx in _SERVICE_TOKENS) + ")" + _E,
          tuple(sorted({t for _, ts, _ in _SERVICE_TOKENS for t in ts.split("|") if t})),
          "a service's API token by its published prefix and shape ("
          + ", ".join(name for name, _, _ in _SERVICE_TOKENS) + ")",
          "gitleaks default rules and trufflehog detectors for the same services",
          # letters and digits, a run of five: the shape is the prefix's ("API-" + 26 capitals is no key)
          check=lambda t, m: tokenish(m.group(), 5),
          # the prefixes too common to select a text alone ("pat", "API-", "v1.0-"), with their shapes' start
          trigger=found(r"pat[A-Za-z0-9]{14}\.[a-f0-9]{8}|(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.|API-[A-Z0-9]{26}"
                        r"|v1\.0-[a-f0-9]{24}-", ascii=True))
_provider("secret.supabase", _B + r"sbp_[a-f0-9]{40}" + _E, ("sbp_",), "Supabase access token (sbp_ + 40 hex)",
          "trufflehog supabasetoken detector")
_provider("secret.grafana", _B + r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2})" + _E,
          ("glsa_", "glc_"), "Grafana service account or cloud token (glsa_, glc_)",
          "gitleaks grafana-service-account-token, grafana-cloud-api-token", tokens=False)
_provider("secret.notion", _B + r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{38,54})" + _E, ("secret_", "ntn_"),
          "Notion integration token (secret_ + 43, ntn_ + 46)", "trufflehog notion detector; Notion's 2024 ntn_ format")
_provider("secret.linear", _B + r"lin_(?:api|oauth)_[A-Za-z0-9]{40}" + _E, ("lin_api_", "lin_oauth_"),
          "Linear API key (lin_api_ + 40)", "gitleaks linear-api-key")
_provider("secret.postman", _B + r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + _E, ("PMAK-",), "Postman API key (PMAK-)",
          "gitleaks postman-api-token", tokens=False)
_provider("secret.age", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}" + _E, ("AGE-SECRET-KEY-1",),
          "age encryption secret key (AGE-SECRET-KEY-1 + 58 bech32)", "gitleaks age-secret-key", tokens=False)
# Other chat and automation services' incoming webhooks: whoever holds the URL posts into the team's
# channel or starts the workflow (Microsoft Teams, new and legacy hosts; Zapier's catch hooks; IFTTT's
# Maker key; Make's hooks).
_provider("secret.webhook_url",
          r"(?:[a-z0-9-]+\.webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)"
          r"/[a-f0-9-]{36}@[a-f0-9-]{36}/IncomingWebhook/[a-f0-9]{32}/[a-f0-9-]{36}"
          r"|hooks\.zapier\.com/hooks/catch/[0-9]{4,12}/[A-Za-z0-9]{5,12}" + _E
          + r"|maker\.ifttt\.com/(?:trigger/[\w-]{1,64}/(?:json/)?with/key|use)/[A-Za-z0-9_-]{20,43}" + _E
          + r"|hook\.(?:[a-z]{2}[0-9]\.)?(?:make|integromat)\.com/[a-z0-9]{32}" + _E,
          ("webhook.office.com/", "outlook.office.com/webhook/", "outlook.office365.com/webhook/", "hooks.zapier.com/",
           "maker.ifttt.com/", "make.com/", "integromat.com/"),
          "an incoming-webhook URL of Microsoft Teams, Zapier, IFTTT or Make", "gitleaks microsoft-teams-webhook; "
          "SonarSource S6720 (Zapier webhook URLs); IFTTT's Maker key and Make's hook URLs as their docs give them",
          tokens=False)
_provider("secret.discord_webhook", r"discord(?:app)?\.com/api/webhooks/\d{17,20}/[A-Za-z0-9_\-]{60,80}" + _E,
          ("/api/webhooks/",), "Discord webhook URL", "gitleaks discord-webhook; trufflehog discordwebhook", tokens=False)


# JWT: three base64url parts, a header that decodes to JSON (as detect-secrets checks).
_JWT = re.compile(_B + r"eyJ[A-Za-z0-9_\-]{8,}={0,2}\.[A-Za-z0-9_\-]{8,}={0,2}\.[A-Za-z0-9_\-]*={0,2}" + _E, re.ASCII)


def _jwt_header_ok(text: str, m: re.Match) -> bool:
    head = m.group().split(".", 1)[0]
    try:
        return isinstance(json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))), dict)
    except ValueError:  # binascii.Error, UnicodeDecodeError and JSONDecodeError are ValueErrors
        return False


register(Rule(id="secret.jwt", category=SECRET, sensitivity=RESTRICTED, placeholder="[JWT]", risk=0.9, binds=(DOC,),
              find=regex_find(_JWT, check=_jwt_header_ok), triggers=("eyJ",), guard=has_token,
              reason="JSON Web Token (three base64url parts, JSON header)",
              origin="gitleaks jwt; detect-secrets JwtTokenDetector (header decoded)"))

# PEM / OpenSSH / PGP private keys: the whole block, or to the end if the END line is missing.
# The key is its body, not its armour: a header retyped in lower case, with more or fewer dashes,
# doubled spaces or no dashes at all (then a base64 line must follow) still wraps the same key.
_PEM_HEAD = r"BEGIN[ \t]+(?:[A-Z0-9]+[ \t]+)*PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?"
_PEM_END = r"-{2,}[ \t]*END[ \t]+(?:[A-Z0-9]+[ \t]+)*PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?[ \t]*-{2,}"
_PEM = re.compile(rf"(?i:-{{2,}}[ \t]*{_PEM_HEAD}[ \t]*-{{2,}}|(?<![\w-]){_PEM_HEAD}[ \t]*-*[ \t]*\r?\n"
                  rf"(?=[A-Za-z0-9+/=:\- ]*\r?\n?[A-Za-z0-9+/=]{{40}})).*?(?:(?i:{_PEM_END})|\Z)"
                  r"|PuTTY-User-Key-File-\d:.*?(?:Private-MAC:[^\n]*|\Z)", re.S)
register(Rule(id="secret.private_key", category=SECRET, sensitivity=RESTRICTED, placeholder="[PRIVATE_KEY]", risk=1.0,
              binds=(DOC,), find=regex_find(_PEM), triggers=("PuTTY-User-Key-File",),
              trigger=found(r"(?i)private[ \t]+key"),
              reason="private-key block (PEM, OpenSSH, PGP or PuTTY)",
              origin="gitleaks private-key; detect-secrets PrivateKeyDetector"))

# AWS secret access keys have no prefix: 40 base64 characters near "aws" and a secret word.
_AWS_SECRET = re.compile(r"(?i:aws)[\w\s\-\"'.:=]{0,30}?(?i:secret|key|pwd|password|token)[\w\s\-\"'.:=]{0,20}?"
                         r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
def _aws_example(v: str) -> bool:
    """A documentation sample, as AWS writes them (see secret.aws_access_key_id): the key id ends
    in EXAMPLE, the secret in EXAMPLEKEY. Nobody's credential, wherever it is pasted."""
    return v.endswith(("EXAMPLE", "EXAMPLEKEY"))


register(Rule(id="secret.aws_secret_key", category=SECRET, sensitivity=RESTRICTED, placeholder="[AWS_SECRET]", risk=1.0,
              binds=(DOC,), find=regex_find(_AWS_SECRET, group=1,
                                              check=lambda t, m: tokenish(m.group(1), 8) and not _aws_example(m.group(1))),
              itriggers=("aws",), guard=has_token, reason="AWS secret access key (40 base64 characters named as an AWS secret)",
              origin="gitleaks aws secret pattern; detect-secrets AWSKeyDetector secret regex"))

# user:password@ in a URL (database DSNs, git remotes, proxies).
# The user may be empty: redis://:password@host is how Redis and a few DSNs carry a password alone.
# A password pasted unencoded may hold an @ ("postgres://app:p@ssw0rd!@db:5432/app"): the
# userinfo runs to the last @ before the host (the authority ends at a slash, a ? or a space).
_URL_CREDS = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}://([^\s:/@'\"]*):([^\s/?'\"]+)@[^\s/?@]+", re.ASCII)
_NOT_VALUES = {"password", "passwd", "pass", "pwd", "secret", "token", "xxx", "xxxx", "changeme?", "str", "string",
               "int", "bool", "boolean", "text", "bytes", "none", "null", "nil", "true", "false", "undefined",
               "required", "optional", "hidden", "redacted", "masked", "empty", "secretstr", "your_password",
               "your-password", "yourpassword", "example", "placeholder", "dummy", "value", "<password>",
               "enabled", "disabled", "unset", "change_me", "changeme", "change-me", "replace_me", "replaceme",
               "replace-me", "your-password-here", "your_password_here", "yourpasswordhere", "tbd", "todo", "test"}
_TEMPLATED = re.compile(r"^(?:\$\{?[\w.:-]*\}?|\$\{[\w.]+:?\?[^}]*\}|\$\(.*\)|<[^>]*>|\{\{.*\}\}|\{[\w.]*\}|%\(?\w*\)?s?|%\w+%|\*+|x{3,}|X{3,}"
                        r"|\.{3}|…|\[[\w\s]*\]|[\w]+\.[\w.]+\(.*\)|(?:os\.)?(?:environ|getenv)\b.*|process\.env\..*"
                        # a command's output ($(cat pw), `cat pw`: read up to a space), Ruby's #{..},
                        # @@TOKEN@@ substitution, a redaction or a description in brackets
                        r"|\$\(.*|`.*|#\{[^}]*\}|@@\w+@@|\[[^\]]*\]?|\([^)]*\)?|<[^>]*)$")


def placeholder_value(v: str) -> bool:
    """A template, a reference or a type, not a value (the filters of detect-secrets and gitleaks'
    stopwords): ``${DB_PASS}``, ``<password>``, ``os.environ[...]``, ``****``, ``str``."""
    return v.lower() in _NOT_VALUES or _TEMPLATED.match(v) is not None or len(set(v)) <= 2 or _aws_example(v)


# An Azure shared access signature: the query's sig= (an HMAC-SHA256 in base64, URL-encoded)
# beside its sv= service version (a date), in a URL or as the bare token the portal hands out
# ("sv=2022-11-02&ss=b&...&sig=..."). A sig= without sv= is some other signature.
_SAS_SIG = re.compile(r"[?&]sig=((?:[A-Za-z0-9+/]|%2[BbFf]){20,}(?:=|%3[Dd]){0,2})(?![A-Za-z0-9%])")
_SAS_VERSION = re.compile(r"(?<![\w%.-])sv=\d{4}-\d\d-\d\d(?![\w-])")
# (a URL or a token: a run of text up to a space or a quote; each read once, however many sig= it holds)
_URL_RUN = re.compile(r"[^\s\"'<>`]+")


def _url_creds(node, ctx: Ctx):
    for m in _URL_CREDS.finditer(ctx.text, node.start, node.end):
        if not placeholder_value(m.group(2)):
            yield m.start(1), m.end(2)
    if "sig=" in ctx.text:
        for run in _URL_RUN.finditer(ctx.text, node.start, node.end):
            a, b = run.span()
            if "sig=" in run.group() and _SAS_VERSION.search(ctx.text, a, b):
                yield from (m.span(1) for m in _SAS_SIG.finditer(ctx.text, a, b))


register(Rule(id="secret.url_credentials", category=SECRET, sensitivity=RESTRICTED, placeholder="[CREDENTIALS]",
              risk=0.9, binds=(DOC,), find=_url_creds, triggers=("://", "sig="),
              reason="credentials in a URL (user:password, an Azure SAS signature)",
              origin="detect-secrets BasicAuthDetector; gitleaks azure-storage SAS (sv= and sig= in one query)"))

# Authorization headers: Bearer/Basic/Token followed by a generated-looking credential.
# (SSWS: Okta's API tokens)
_AUTH = re.compile(r"\b(?:Bearer|Basic|Token|bearer|token|SSWS)\s+([A-Za-z0-9._~+/\-]{16,}=*)")
register(Rule(id="secret.auth_header", generic=True, category=SECRET, sensitivity=RESTRICTED, placeholder="[TOKEN]", risk=0.9,
              binds=(DOC,), find=regex_find(_AUTH, group=1, check=lambda t, m: tokenish(m.group(1), 12)),
              itriggers=("bearer", "basic ", "token ", "ssws "), guard=has_token,
              reason="credential in an Authorization header",
              origin="RFC 6750 / RFC 7617 header schemes; Okta's SSWS scheme; gitleaks generic-api-key keywords"))


# A key wrapped in base64 (a config blob, ``echo $KEY | base64``) is the key: the run is decoded
# and looked at with the shapes above (a provider prefix, a JWT, a private-key block), as
# detect-secrets and trufflehog decode base64 before matching. Random bytes are not opened:
# the decoded text must be printable UTF-8.
_SHAPES += [(_JWT, _jwt_header_ok), (_PEM, None)]
_B64 = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{24,}={0,2}(?![A-Za-z0-9+/=_\-])", re.ASCII)


def _encoded(node, ctx: Ctx):
    for m in _B64.finditer(ctx.text, node.start, node.end):
        text = base64_text(m.group(), letters=False)
        if text and any(check is None or check(text, h) for rx, check in _SHAPES for h in rx.finditer(text)):
            yield m.span()


register(Rule(id="secret.base64_wrapped", category=SECRET, sensitivity=RESTRICTED, placeholder="[API_KEY]", risk=1.0,
              binds=(DOC,), find=_encoded, trigger=found(r"[A-Za-z0-9+/_\-]{24}", ascii=True), guard=has_token,
              reason="a key of a known shape (provider prefix, JWT, private key) wrapped in base64",
              origin="detect-secrets and trufflehog decode base64 before matching; the shapes are this module's"))


# Cryptocurrency wallet keys with a shape of their own. BIP-32 extended private keys: a version
# prefix (xprv/tprv, and BIP-49/84's yprv/zprv/uprv/vprv) and 107 more base58 characters.
# Wallet Import Format keys: 51 characters from 5H/5J/5K, 52 from K/L (a compressed key);
# base58 runs that long occur otherwise (ids, hashes), so the Base58Check checksum must hold.
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(_B58)}
_XPRV_PREFIXES = ("xprv", "tprv", "yprv", "zprv", "uprv", "vprv", "Yprv", "Zprv", "Uprv", "Vprv")
_CRYPTO_KEY = re.compile(r"(?<![A-Za-z0-9])(?:(?:[xtyzuv]|[YZUV])prv[1-9A-HJ-NP-Za-km-z]{107}"
                         r"|5[HJK][1-9A-HJ-NP-Za-km-z]{49}|[KL][1-9A-HJ-NP-Za-km-z]{51})(?![A-Za-z0-9])", re.ASCII)


def _b58decode(s: str) -> bytes:
    n = 0
    for c in s:
        n = n * 58 + _B58_INDEX[c]
    return b"\0" * (len(s) - len(s.lstrip("1"))) + n.to_bytes((n.bit_length() + 7) // 8, "big")


def _wallet_key(text: str, m: re.Match) -> bool:
    """An extended private key by its prefix; a WIF key by its payload (version 0x80, 32 key
    bytes, then 0x01 if compressed) and its Base58Check checksum."""
    v = m.group()
    if v.startswith(_XPRV_PREFIXES):
        return True
    raw = _b58decode(v)
    body, check = raw[:-4], raw[-4:]
    return (len(body) == (33 if v[0] == "5" else 34) and body[0] == 0x80 and (v[0] == "5" or body[33] == 0x01)
            and hashlib.sha256(hashlib.sha256(body).digest()).digest()[:4] == check)


_SHAPES.append((_CRYPTO_KEY, _wallet_key))
register(Rule(id="secret.crypto_key", category=SECRET, sensitivity=RESTRICTED, placeholder="[PRIVATE_KEY]", risk=1.0,
              binds=(DOC,), find=regex_find(_CRYPTO_KEY, check=_wallet_key), triggers=_XPRV_PREFIXES,
              # a WIF key's first characters at a word's start: a bare 51-character base58 run as
              # the trigger cost the pre-scan's automaton 20 times its time on log lines
              trigger=found(r"(?:^|[^A-Za-z0-9])(?:5[HJK]|[KL])[1-9A-HJ-NP-Za-km-z]{14}", ascii=True), guard=has_token,
              reason="cryptocurrency private key (BIP-32 xprv/tprv extended key, or WIF with a valid checksum)",
              origin="BIP-32 serialization format; Bitcoin wiki Wallet Import Format; trufflehog's bitcoin detectors"))


# A raw private key as Ethereum and most wallets export it: 64 hex digits (0x or not) named as a
# private, secret, signing or wallet key, with or without "is": "my ethereum private key 0x4c08...".
# The same 64 digits alone are a transaction hash or a SHA-256, and so is a key's *hash*, *id* or
# *address* ("private key hash 0x..."): those stay.
_HEX_KEY = re.compile(r"(?i:\b(?:private|priv|secret|signing|wallet)[ _-]?key)s?\b((?:[ \t]+[\w'’-]+){0,3}?)[ \t]*"
                      r"(?:is|was|[:=：\-])?[ \t]*[\"'`]?((?:0x)?[0-9a-fA-F]{64})(?![0-9A-Za-z])")
_NOT_THE_KEY = re.compile(r"\b(?:hash|hashes|fingerprint|digest|checksum|id|ids|address|addresses|public|pub)\b", re.I)


register(Rule(id="secret.hex_private_key", category=SECRET, sensitivity=RESTRICTED, placeholder="[PRIVATE_KEY]", risk=1.0,
              binds=(DOC,), find=regex_find(_HEX_KEY, group=2, check=lambda t, m: not _NOT_THE_KEY.search(m.group(1))),  # the names, not 64 hex digits (a long counted run grows the pre-scan's automaton)
              itriggers=tuple(f"{w}{sep}key" for w in ("private", "priv", "secret", "signing", "wallet") for sep in (" ", "_", "-", "")),
              reason="64 hex digits named as a private, secret, signing or wallet key",
              origin="Ethereum's raw private key export (MetaMask 'export private key', geth); gitleaks' "
                     "generic rules key the same hex by its name"))


# A password's hash as a system stores it: crypt(3)'s "$id$salt$hash" (MD5-crypt $1$, Apache's
# $apr1$, SHA-crypt $5$/$6$ with or without rounds=, yescrypt $y$), bcrypt ($2b$12$ and 53
# characters), Argon2's PHC string, Django's pbkdf2_sha256$... An /etc/shadow or .htpasswd line
# carries one. Cracked offline, it is the password: redacted, as an unnamed generated value is.
_PW_HASH = re.compile(
    r"(?<![\w$])(?:\$(?:1|5|6|apr1|md5)\$(?:rounds=\d{3,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{22,86}"
    r"|\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}"
    r"|\$(?:y|gy|7)\$[./A-Za-z0-9]{1,64}\$[./A-Za-z0-9]{1,64}\$[./A-Za-z0-9]{43}"
    r"|\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]{11,}\$[A-Za-z0-9+/]{16,}"
    r"|(?:pbkdf2_sha(?:1|256|512)|bcrypt_sha256|scrypt)\$\d+\$[A-Za-z0-9+/=.$]{8,}\$?[A-Za-z0-9+/=]{20,})"
    r"(?![./A-Za-z0-9+=])")


register(Rule(id="secret.password_hash", category=SECRET, sensitivity=CONFIDENTIAL, placeholder="[PASSWORD_HASH]",
              risk=0.7, binds=(DOC,), find=regex_find(_PW_HASH),
              triggers=("$1$", "$5$", "$6$", "$apr1$", "$md5$", "$2a$", "$2b$", "$2y$", "$2x$", "$2$", "$y$", "$gy$",
                        "$7$", "$argon2", "pbkdf2_sha", "bcrypt_sha256$", "scrypt$"),
              reason="a password's stored hash (crypt(3) $1$/$5$/$6$/$y$, bcrypt, Argon2, Django's pbkdf2)",
              origin="crypt(5) and the PHC string format; passlib's hash identifiers; /etc/shadow and .htpasswd "
                     "lines as hashcat's example hashes show them"))
