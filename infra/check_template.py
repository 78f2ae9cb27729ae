"""Checks the environment template (template.yaml) and the route template (infra/route.yaml)
against the workspace and against each other, beyond what cfn-lint and `sam validate --lint` see.

Every function (both templates):
- is a Rust function SAM builds with cargo-lambda (provided.al2023, bootstrap, arm64, BuildMethod
  rust-cargolambda) and its Binary names a Lambda binary the workspace builds;
- sets every MCP_* variable the gateway reads (shared/src/config/gateway.rs,
  shared/src/config/auth.rs, and shared/src/telemetry.rs: MCP_METRICS_NAMESPACE, which
  docs/operating.md documents) and docs/configuration.md documents, and no MCP_* variable the
  gateway does not read;
- logs to a log group of its own with a retention;
- its role's tool grants (CONTRACT X10, M5, X12) are one statement each, under a condition that
  holds exactly when its parameter is not empty (TOOL_GRANTS): lambda:InvokeFunction scoped by
  ToolFunctionArns and by ToolFunctionPrefix, secretsmanager:GetSecretValue on exactly
  ToolSecretArns, ssm:GetParameter on exactly ToolParameterArns, execute-api:Invoke on exactly
  ToolExecuteApiArns; rendered, the role has none of them with the parameters empty and exactly
  the listed ARNs with them filled in (TOOL_VALUES).

The environment (template.yaml):
- one HTTP API, defined by AWS::ApiGatewayV2 resources, never by an OpenAPI Body (an update of a
  Body re-imports the API and deletes the routes route stacks added), no CorsConfiguration
  (preflights reach the functions, H9); one $default stage, auto-deployed, that throttles every
  route (DefaultRouteSettings, burst and rate limits);
- custom-domain resources only under the condition HasDomain, which needs DomainName;
- every path sends every method (ANY) to the function whose MCP_ENDPOINT_PATH it serves, so GET
  gets the gateway's 405, not a gateway 404; the protected-resource metadata path of each public
  path (RFC 9728) sends GET to the same function; the root metadata path reaches a function (A10);
  API Gateway may invoke each function from its routes;
- the only permissions besides the tool grants are s3:GetObject on the manifest object and
  dynamodb:UpdateItem on the delegation table that MCP_AUTH_TABLE names (on-demand, string key
  pk, TTL on ttl);
- Outputs give the public URL and export, named after the stack, what route stacks import;
- one CloudWatch dashboard of every route (CONTRACT U4): rendered with a namespace and region of
  the check's own, every metric widget's region is AWS::Region and every query reads the
  functions' MCP_METRICS_NAMESPACE; each query is a Metrics Insights query FROM SCHEMA(...) or a
  SEARCH with a {namespace,dimensions} schema, and its metric, dimension set and Outcome and
  Method values are ones shared/src/usage/metrics.rs and record.rs emit (METRICS_SOURCE,
  emitted_metrics); the widgets lie on the 24-column grid without overlap and show the views of
  DASHBOARD_VIEWS; infra/dashboard/render.py reads the same widgets, and the committed
  infra/dashboard/dashboard.svg is what it draws now.

The route template (infra/route.yaml), rendered for two route keys side by side:
- one function, MCP_ENDPOINT_PATH /mcp/<RouteKey>, fixed routing, the manifest object
  s3://<bucket>/<key> (routes/<RouteKey>/manifest.json by default);
- its role grants s3:GetObject on that object, dynamodb:UpdateItem on the environment's table,
  writing its own log group and the tool grants, nothing else;
- ANY /mcp/<RouteKey>, ANY /mcp/<RouteKey>/{proxy+} and GET <metadata>/mcp/<RouteKey> on the
  environment's API, through one AWS_PROXY integration (payload 2.0), invokable from those paths
  only;
- it redefines nothing of the environment, shares no route or physical name with the
  environment or with another route stack, and reaches the environment only through
  Fn::ImportValue of exports the environment template defines; its URL is an output, not an export;
- its alarms read the route's own series (Route = RouteKey) in the imported namespace, of
  metrics and dimension sets the code emits, treat missing data as not breaching, take their
  thresholds from parameters and notify AlarmTopicArn when it is set, no one otherwise; an
  error-rate alarm (FailedRequests / Requests) and a p99 Latency alarm are among them.

A cfn-lint rule silenced in a template's Metadata carries its reason in Metadata.LintSilenced.

Run from the repository root with the Python of .venv (infra/lint.sh does). With `render DIR`,
writes the route template rendered for each key of RENDERED_KEYS into DIR instead (JSON, the
keys as parameter defaults), for cfn-lint and `sam validate --lint`.
"""

import copy
import fnmatch
import importlib.util
import json
import os
import re
import subprocess
import sys

from cfnlint.decode import decode
from samtranslator.metrics.method_decorator import MetricsMethodWrapperSingleton
from samtranslator.translator.transform import transform

ENVIRONMENT = "template.yaml"
ROUTE = "infra/route.yaml"
# Files whose quoted "MCP_*" names are the variables the gateway reads.
VARIABLE_SOURCES = ["shared/src/config/gateway.rs", "shared/src/config/auth.rs"]
# The guide whose configuration table lists every MCP_* variable the gateway reads.
CONFIGURATION_GUIDE = "docs/configuration.md"
# Files whose quoted "MCP_*" names are variables of the telemetry (the metrics namespace), and
# the guide that documents those the configuration table does not list.
TELEMETRY_SOURCES = ["shared/src/telemetry.rs"]
TELEMETRY_GUIDE = "docs/operating.md"
# The usage metrics (CONTRACT U1, U4): the names, dimension sets and their constants
# (*_DIMENSIONS, *_METRICS), the labels of the Outcome and Method dimensions, the method names.
METRICS_SOURCE = "shared/src/usage/metrics.rs"
RECORD_SOURCE = "shared/src/usage/record.rs"
METHODS_SOURCE = "shared/src/protocol/methods.rs"
# The dashboard's layout drawn as a picture (infra/README.md shows it).
DASHBOARD_RENDERER = "infra/dashboard/render.py"
# Values the environment's dashboard is rendered with, unlike the defaults, so that a namespace
# or region written into the body instead of taken from the parameter and AWS::Region shows.
CHECK_NAMESPACE = "McpGatewayCheck"
CHECK_REGION = "eu-central-2"
# A topic for the route alarms' actions (AlarmTopicArn), to render them with one.
ALARM_TOPIC = "arn:aws:sns:us-east-1:123456789012:mcp-route-alarms"
# RFC 9728 metadata of a resource at https://host/PATH lives at https://host/WELL_KNOWN/PATH.
WELL_KNOWN = "/.well-known/oauth-protected-resource"
# What the environment exports as ${AWS::StackName}-<name>, and route stacks import.
EXPORTS = {
    "ApiId",
    "ApiEndpoint",
    "PublicBaseUrl",
    "AuthTableName",
    "AuthTableArn",
    "MetricsNamespace",
}
# Two route stacks as `mcp-manifest new-route KEY` configures them (stack mcp-route-KEY); one
# key is a prefix of the other, so that a permission or name that matches by prefix shows.
ENVIRONMENT_STACK = "mcp-gateway"
RENDERED_KEYS = ["hr", "hr-eu"]
BUCKET = "manifest-bucket"
PSEUDO = {
    "AWS::Region": "us-east-1",
    "AWS::AccountId": "123456789012",
    "AWS::Partition": "aws",
    "AWS::URLSuffix": "amazonaws.com",
}
# The route template's parameters: those `mcp-manifest new-route` writes into a route's
# samconfig.toml (no default needed), and the settings a team may change (defaulted).
ROUTE_PASSED = {"RouteKey", "EnvironmentStack", "ManifestBucket", "ManifestRevision"}
ROUTE_SETTINGS = {
    "ManifestKey",
    "DefaultToolTimeoutMs",
    "DeadlineMarginMs",
    "AuthMode",
    "RateLimit",
    "LogLevel",
    "MemorySize",
    "ErrorRateThresholdPercent",
    "ErrorRateMinRequests",
    "LatencyP99ThresholdMs",
    "AlarmTopicArn",
}
# Resource types only the environment defines: a route stack imports them.
ENVIRONMENT_ONLY = {
    "AWS::ApiGatewayV2::Api",
    "AWS::ApiGatewayV2::Stage",
    "AWS::ApiGatewayV2::DomainName",
    "AWS::ApiGatewayV2::ApiMapping",
    "AWS::DynamoDB::Table",
    "AWS::Serverless::HttpApi",
    "AWS::Serverless::Api",
}
# The route role's log permissions, on its own log group only.
LOG_ACTIONS = {"logs:CreateLogStream", "logs:PutLogEvents"}
problems = []


def problem(template, text):
    problems.append(f"{template}: {text}")


# ---------------------------------------------------------------------------------------------
# The workspace


def workspace_lambda_binaries():
    """Binary targets of workspace packages that depend on lambda_http."""
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    binaries = {}
    for package in metadata["packages"]:
        is_lambda = any(d["name"] == "lambda_http" for d in package["dependencies"])
        for target in package["targets"]:
            if "bin" in target["kind"]:
                binaries[target["name"]] = is_lambda
    return binaries


def quoted_variables(sources):
    names = set()
    for source in sources:
        with open(source, encoding="utf-8") as f:
            names |= set(re.findall(r'"(MCP_[A-Z_]+)"', f.read()))
    return names


def gateway_variables():
    """MCP_* names read by the configuration and telemetry code, and those documented: the
    configuration table of docs/configuration.md lists every variable of the configuration code
    and may list the telemetry's; a telemetry variable it does not list (MCP_METRICS_NAMESPACE)
    is documented in docs/operating.md."""
    in_code = quoted_variables(VARIABLE_SOURCES)
    telemetry = quoted_variables(TELEMETRY_SOURCES)
    with open(CONFIGURATION_GUIDE, encoding="utf-8") as f:
        in_guide = set(re.findall(r"^\| `(MCP_[A-Z_]+)`", f.read(), re.MULTILINE))
    if in_code != in_guide - telemetry:
        problem(
            CONFIGURATION_GUIDE,
            f"configuration table and {' + '.join(VARIABLE_SOURCES)} differ: "
            f"code only {sorted(in_code - in_guide)}, guide only {sorted(in_guide - in_code - telemetry)}",
        )
    with open(TELEMETRY_GUIDE, encoding="utf-8") as f:
        documented = set(re.findall(r"`(MCP_[A-Z_]+)`", f.read()))
    undocumented = sorted(telemetry - in_guide - documented)
    if undocumented:
        problem(
            TELEMETRY_GUIDE,
            f"{undocumented} ({' + '.join(TELEMETRY_SOURCES)}) are documented neither here nor in "
            f"{CONFIGURATION_GUIDE}",
        )
    return in_code | telemetry, in_guide | telemetry


# ---------------------------------------------------------------------------------------------
# Templates: SAM transform and rendering with parameter values


def load(path):
    template, matches = decode(path)
    for match in matches or []:
        problem(path, str(match))
    return template if not matches else None


def merged_function(template, resource):
    """A SAM function's properties with the template's Globals applied."""
    merged = copy.deepcopy(template.get("Globals", {}).get("Function", {}))
    return merge_dicts(merged, resource.get("Properties", {}))


def merge_dicts(base, extra):
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_dicts(out[key], value)
        else:
            out[key] = value
    return out


def transformed(template):
    """The template after the SAM transform, as CloudFormation would get it."""
    document = copy.deepcopy(template)
    for resource in document["Resources"].values():
        if resource["Type"] == "AWS::Serverless::Function":
            resource.setdefault("Properties", {})["CodeUri"] = "s3://bucket/code.zip"

    class NoManagedPolicies:
        def load(self):
            return {}

    os.environ.setdefault("AWS_DEFAULT_REGION", PSEUDO["AWS::Region"])
    result = transform(document, {"ManifestBucket": BUCKET}, NoManagedPolicies())
    # The translator times itself into a process-wide dummy sink that warns at exit unless
    # published; publishing it sends nothing.
    MetricsMethodWrapperSingleton.get_instance().publish()
    return result


NO_VALUE = object()


class Renderer:
    """Resolves the intrinsic functions of a template for given parameter values.

    A resource's Ref renders as <Logical>, its attribute as <Logical.Attribute>, an import as
    <import:NAME>: stand-ins that compare equal exactly when CloudFormation's values would.
    """

    def __init__(self, template, stack, values):
        self.template = template
        self.params = {
            name: str(p["Default"])
            for name, p in template.get("Parameters", {}).items()
            if "Default" in p
        }
        self.params.update(values)
        self.params.update(PSEUDO)
        self.params["AWS::StackName"] = stack
        # A CommaDelimitedList parameter's Ref is the list of its values.
        self.lists = {
            name
            for name, p in template.get("Parameters", {}).items()
            if p.get("Type") == "CommaDelimitedList"
        }
        self.conditions = {}

    def condition(self, name):
        if name not in self.conditions:
            self.conditions[name] = self.truth(self.template["Conditions"][name])
        return self.conditions[name]

    def truth(self, node):
        (function, args), = node.items()
        if function == "Fn::Equals":
            return self.render(args[0]) == self.render(args[1])
        if function == "Fn::Not":
            return not self.truth(args[0])
        if function == "Fn::And":
            return all(self.truth(a) for a in args)
        if function == "Fn::Or":
            return any(self.truth(a) for a in args)
        if function == "Condition":
            return self.condition(args)
        raise ValueError(f"unknown condition function {function}")

    def name(self, name, variables):
        if name in variables:
            return variables[name]
        if name in self.params:
            return self.params[name]
        if "." in name:
            return f"<{name}>"
        if name in self.template.get("Resources", {}):
            return f"<{name}>"
        raise ValueError(f"unresolved name {name}")

    def render(self, node):
        if isinstance(node, list):
            return [v for v in (self.render(v) for v in node) if v is not NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            (key, args), = node.items()
            if key == "Ref":
                if args == "AWS::NoValue":
                    return NO_VALUE
                value = self.name(args, {})
                return value.split(",") if args in self.lists else value
            if key == "Fn::GetAtt":
                parts = args.split(".", 1) if isinstance(args, str) else args
                return f"<{parts[0]}.{parts[1]}>"
            if key == "Fn::ImportValue":
                return f"<import:{self.render(args)}>"
            if key == "Fn::If":
                return self.render(args[1] if self.condition(args[0]) else args[2])
            if key == "Fn::Join":
                return self.render(args[0]).join(self.render(args[1]))
            if key == "Fn::Split":
                return self.render(args[1]).split(self.render(args[0]))
            if key == "Fn::Sub":
                text, variables = (args, {}) if isinstance(args, str) else args
                variables = {k: self.render(v) for k, v in variables.items()}
                return re.sub(
                    r"\$\{(!?)([^}]+)\}",
                    lambda m: "${" + m.group(2) + "}"
                    if m.group(1)
                    else self.name(m.group(2), variables),
                    text,
                )
        out = {}
        for key, value in node.items():
            value = self.render(value)
            if value is not NO_VALUE:
                out[key] = value
        return out

    def resources(self):
        """The rendered resources whose condition holds."""
        return {
            name: self.render(r)
            for name, r in self.template["Resources"].items()
            if "Condition" not in r or self.condition(r["Condition"])
        }

    def outputs(self):
        return {
            name: self.render(o)
            for name, o in self.template.get("Outputs", {}).items()
            if "Condition" not in o or self.condition(o["Condition"])
        }


def of_type(resources, kind):
    return {name: r for name, r in resources.items() if r["Type"] == kind}


def actions_of(statement):
    actions = statement.get("Action")
    return actions if isinstance(actions, list) else [actions]


# CONTRACT X10, M5 and X12: a function may invoke the Lambda functions its tools name, read the
# secrets and parameters their _meta.auth names and call the APIs they sign requests for, and
# nothing else of the kind. Each grant is one statement under a condition that holds exactly when
# its parameter is not empty (else AWS::NoValue), allows its one action, and takes its resources
# from that parameter: {condition: (parameter, its type, action)}.
TOOL_GRANTS = {
    "HasToolFunctions": ("ToolFunctionArns", "CommaDelimitedList", "lambda:InvokeFunction"),
    "HasToolFunctionPrefix": ("ToolFunctionPrefix", "String", "lambda:InvokeFunction"),
    "HasToolSecrets": ("ToolSecretArns", "CommaDelimitedList", "secretsmanager:GetSecretValue"),
    "HasToolParameters": ("ToolParameterArns", "CommaDelimitedList", "ssm:GetParameter"),
    "HasToolExecuteApis": ("ToolExecuteApiArns", "CommaDelimitedList", "execute-api:Invoke"),
}
# The grants whose resources are the listed ARNs exactly (Resource: !Ref <parameter>, nothing
# appended or derived); the Lambda grants add versions and aliases, or match a name prefix.
EXACT_TOOL_GRANTS = {"HasToolSecrets", "HasToolParameters", "HasToolExecuteApis"}
TOOL_ACTIONS = {action for _, _, action in TOOL_GRANTS.values()}
# The tool grant parameters filled in, and the statements (action, resources) a role then has:
# the functions with their versions and aliases, the prefix, and the other ARNs exactly as listed
# (a secret by its full ARN and by its ARN with -?????? for the suffix).
_ARN = f"{PSEUDO['AWS::Region']}:{PSEUDO['AWS::AccountId']}"
_FUNCTIONS = [f"arn:aws:lambda:{_ARN}:function:hr-a", f"arn:aws:lambda:{_ARN}:function:hr-b"]
_SECRETS = [
    f"arn:aws:secretsmanager:{_ARN}:secret:hr/api-key-AbCdEf",
    f"arn:aws:secretsmanager:{_ARN}:secret:hr/client-??????",
]
_PARAMETERS = [f"arn:aws:ssm:{_ARN}:parameter/hr/token"]
_APIS = [f"arn:aws:execute-api:{_ARN}:abc123/*", f"arn:aws:execute-api:{_ARN}:def456/prod/GET/items/*"]
TOOL_VALUES = {
    "ToolFunctionArns": ",".join(_FUNCTIONS),
    "ToolFunctionPrefix": "hr-",
    "ToolSecretArns": ",".join(_SECRETS),
    "ToolParameterArns": ",".join(_PARAMETERS),
    "ToolExecuteApiArns": ",".join(_APIS),
}
TOOL_STATEMENTS = sorted(
    [
        ("lambda:InvokeFunction", tuple(sorted(_FUNCTIONS + [f + ":*" for f in _FUNCTIONS]))),
        ("lambda:InvokeFunction", (f"arn:aws:lambda:{_ARN}:function:hr-*",)),
        ("secretsmanager:GetSecretValue", tuple(sorted(_SECRETS))),
        ("ssm:GetParameter", tuple(sorted(_PARAMETERS))),
        ("execute-api:Invoke", tuple(sorted(_APIS))),
    ]
)


def tool_grant(statement):
    """(condition, problem) of a conditional statement, the problem "" when it is a sound tool
    grant; None when the statement is not conditional (a plain statement)."""
    if not (isinstance(statement, dict) and list(statement) == ["Fn::If"]):
        return None
    condition, granted, otherwise = statement["Fn::If"]
    if condition not in TOOL_GRANTS:
        return condition, f"a conditional statement must stand under {sorted(TOOL_GRANTS)}: {statement}"
    parameter, _, action = TOOL_GRANTS[condition]
    if otherwise != {"Ref": "AWS::NoValue"}:
        return condition, f"{condition}: with {parameter} empty the statement must be AWS::NoValue"
    if (
        not isinstance(granted, dict)
        or granted.get("Effect") != "Allow"
        or actions_of(granted) != [action]
        or {"NotAction", "NotResource", "Condition"} & set(granted)
    ):
        return condition, f"{condition}: the statement must be a plain Allow of {action} alone"
    resource = granted.get("Resource")
    if condition in EXACT_TOOL_GRANTS:
        if resource != {"Ref": parameter}:
            return condition, f"{condition}: {action} must be on exactly !Ref {parameter}, is {resource}"
        return condition, ""
    text = json.dumps(resource)
    named = f'"{parameter}"' in text or "${" + parameter + "}" in text
    if not named or '"*"' in text:
        return condition, f"{condition}: {action} must be scoped by the parameter {parameter}"
    return condition, ""


def check_tool_grants(where, statements):
    """Exactly one sound conditional grant per entry of TOOL_GRANTS among the statements."""
    found = [g for g in (tool_grant(s) for s in statements) if g is not None]
    for _, text in found:
        if text:
            problem(where, text)
    sound = [condition for condition, text in found if not text]
    for condition, (parameter, _, action) in TOOL_GRANTS.items():
        if sound.count(condition) != 1:
            problem(
                where,
                f"expected one sound {action} grant under {condition} ({parameter}), found "
                f"{sound.count(condition)}",
            )


def check_tool_grant_conditions(where, template):
    """Each tool grant's parameter exists with its type and an empty default (no grant), and its
    condition holds exactly when the parameter is not empty."""
    parameters = template.get("Parameters", {})
    conditions = template.get("Conditions", {})
    for condition, (parameter, kind, _) in TOOL_GRANTS.items():
        declared = parameters.get(parameter)
        if declared is None:
            problem(where, f"the parameter {parameter} is missing (CONTRACT X10, M5, X12)")
            continue
        if declared.get("Type") != kind or declared.get("Default") != "":
            problem(where, f"the parameter {parameter} must be a {kind} that defaults to empty")
        tested = {"Ref": parameter}
        if kind == "CommaDelimitedList":
            tested = {"Fn::Join": ["", tested]}
        if conditions.get(condition) != {"Fn::Not": [{"Fn::Equals": [tested, ""]}]}:
            problem(
                where,
                f"the condition {condition} must be !Not [!Equals [{tested}, \"\"]], true exactly "
                f"when {parameter} is not empty",
            )


def check_rendered_tool_grants(where, statements, filled):
    """The tool statements of a rendered role: none when the tool parameters are empty, exactly
    TOOL_STATEMENTS when they are TOOL_VALUES."""
    found = []
    for statement in statements:
        actions = set(actions_of(statement))
        if not actions & TOOL_ACTIONS:
            continue
        resource = statement.get("Resource")
        resources = resource if isinstance(resource, list) else [resource]
        if (
            len(actions) != 1
            or statement.get("Effect") != "Allow"
            or {"NotAction", "NotResource", "Condition"} & set(statement)
        ):
            problem(where, f"a tool grant must be a plain Allow of one action: {statement}")
        found.append((sorted(actions)[0], tuple(sorted(map(str, resources)))))
    expected = TOOL_STATEMENTS if filled else []
    if sorted(found) != expected:
        problem(
            where,
            f"with the tool parameters {'filled' if filled else 'empty'}, the role grants "
            f"{sorted(found)}, expected {expected}",
        )


# ---------------------------------------------------------------------------------------------
# Checks shared by both templates


def check_lint_reasons(path, template):
    """A rule silenced for the template carries its reason in Metadata.LintSilenced."""
    metadata = template.get("Metadata", {})
    ignored = metadata.get("cfn-lint", {}).get("config", {}).get("ignore_checks", [])
    reasons = metadata.get("LintSilenced", {})
    for rule in ignored:
        if not str(reasons.get(rule, "")).strip():
            problem(path, f"cfn-lint rule {rule} is silenced without a reason in Metadata.LintSilenced")
    for rule in reasons:
        if rule not in ignored:
            problem(path, f"Metadata.LintSilenced explains {rule}, which is not silenced")
    for name, resource in template.get("Resources", {}).items():
        if "cfn-lint" in resource.get("Metadata", {}):
            problem(path, f"{name}: silence lint rules in the template's Metadata, with a reason")


def check_function(path, name, props, metadata, binaries, variables):
    """Runtime, build, binary and variables of a function; its MCP_* variables."""
    in_code, in_guide = variables
    for key, expected in [
        ("Runtime", "provided.al2023"),
        ("Handler", "bootstrap"),
        ("Architectures", ["arm64"]),
    ]:
        if props.get(key) != expected:
            problem(path, f"{name}: {key} is {props.get(key)!r}, expected {expected!r}")
    if metadata.get("BuildMethod") != "rust-cargolambda":
        problem(path, f"{name}: Metadata.BuildMethod must be rust-cargolambda")
    binary = metadata.get("BuildProperties", {}).get("Binary")
    if binary not in binaries:
        problem(path, f"{name}: Binary {binary!r} is not a binary of the workspace {sorted(binaries)}")
    elif not binaries[binary]:
        problem(path, f"{name}: Binary {binary!r} is not a Lambda function (no lambda_http)")
    env = props.get("Environment", {}).get("Variables", {})
    missing = sorted((in_code | in_guide) - set(env))
    if missing:
        problem(path, f"{name}: environment lacks {missing}")
    unknown = sorted(v for v in env if v.startswith("MCP_") and v not in in_code)
    if unknown:
        problem(path, f"{name}: sets {unknown}, which the gateway does not read")
    return binary, env


def check_log_group(path, name, props, resources):
    group = props.get("LoggingConfig", {}).get("LogGroup", {})
    group = group.get("Ref") if isinstance(group, dict) else None
    if group not in resources or resources[group]["Type"] != "AWS::Logs::LogGroup":
        problem(path, f"{name}: LoggingConfig.LogGroup must be a log group of the template")
        return None
    if "RetentionInDays" not in resources[group].get("Properties", {}):
        problem(path, f"{name}: its log group {group} has no RetentionInDays")
    return group


def invocation_arns(api, route_key):
    """execute-api ARNs of requests that a route answers (a few methods and deeper paths)."""
    method, route_path = route_key.split(" ", 1)
    concrete = route_path.replace("{proxy+}", "a/b").replace("{routeKey}", "core")
    methods = ["GET", "POST", "DELETE", "OPTIONS"] if method == "ANY" else [method]
    prefix = f"arn:aws:execute-api:{PSEUDO['AWS::Region']}:{PSEUDO['AWS::AccountId']}:{api}/$default"
    return [f"{prefix}/{m}{concrete}" for m in methods]


def api_routes(path, resources, api):
    """{route key: function} of the rendered routes on `api`, after checking integrations."""
    integrations = of_type(resources, "AWS::ApiGatewayV2::Integration")
    routes = {}
    for name, route in of_type(resources, "AWS::ApiGatewayV2::Route").items():
        props = route["Properties"]
        if props.get("ApiId") != api:
            problem(path, f"{name}: ApiId {props.get('ApiId')} is not the HTTP API {api}")
        target = props.get("Target", "")
        integration = target[len("integrations/<") : -1] if target.startswith("integrations/<") else None
        if integration not in integrations:
            problem(path, f"{name}: Target {target!r} is not an integration of the template")
            continue
        iprops = integrations[integration]["Properties"]
        if iprops.get("ApiId") != api:
            problem(path, f"{integration}: ApiId {iprops.get('ApiId')} is not the HTTP API {api}")
        if iprops.get("IntegrationType") != "AWS_PROXY" or iprops.get("PayloadFormatVersion") != "2.0":
            problem(path, f"{integration}: must be AWS_PROXY with PayloadFormatVersion 2.0")
        uri = iprops.get("IntegrationUri", "")
        function = uri[1 : -len(".Arn>")] if uri.endswith(".Arn>") else None
        if function not in resources:
            problem(path, f"{integration}: IntegrationUri {uri!r} is not a function's ARN")
        key = props.get("RouteKey")
        if key in routes:
            problem(path, f"route {key} is defined twice")
        routes[key] = function
    return routes


def check_permissions(path, resources, api, routes):
    """API Gateway may invoke each route's function from that route, from this API only."""
    permissions = of_type(resources, "AWS::Lambda::Permission").values()
    prefix = f"arn:aws:execute-api:{PSEUDO['AWS::Region']}:{PSEUDO['AWS::AccountId']}:{api}/"
    for permission in permissions:
        props = permission["Properties"]
        if props.get("Principal") != "apigateway.amazonaws.com" or not str(
            props.get("SourceArn", "")
        ).startswith(prefix):
            problem(path, f"a Lambda permission is not scoped to the HTTP API {api}: {props}")
    for key, function in routes.items():
        for arn in invocation_arns(api, key):
            if not any(
                p["Properties"].get("FunctionName") == f"<{function}>"
                and fnmatch.fnmatchcase(arn, p["Properties"].get("SourceArn", ""))
                for p in permissions
            ):
                problem(path, f"no Lambda permission lets route {key} invoke {function} ({arn})")


def check_paths(path, routes, endpoints):
    """ANY on MCP paths, GET on metadata paths; each function's paths reach it."""
    for key in routes:
        method, route_path = key.split(" ", 1)
        if route_path == WELL_KNOWN or route_path.startswith(WELL_KNOWN + "/"):
            if method != "GET":
                problem(path, f"HTTP API metadata path {route_path} must send GET, has {method}")
        elif method != "ANY":
            problem(path, f"HTTP API path {route_path} must send every method (ANY), has {method}")
    for function, (endpoint, routing) in endpoints.items():
        public = endpoint if routing == "fixed" else endpoint + "/{routeKey}"
        wanted = {
            f"ANY {endpoint}",
            f"ANY {public}",
            f"ANY {public}/{{proxy+}}",
            f"GET {WELL_KNOWN}{public}",
        }
        served = {key for key, f in routes.items() if f == function}
        if not wanted <= served:
            problem(path, f"{function}: HTTP API routes {sorted(served)} do not cover {sorted(wanted)}")
    return {key.split(" ", 1)[1] for key in routes}


def physical_names(resources):
    """(kind, name) of every name a resource claims in the account, and of every API route.

    A name is a top-level property whose key ends in Name (FunctionName, LogGroupName, RoleName,
    TableName, Name, DomainName, AlarmName, ...) and whose value is not just a reference to another
    resource; a role's Path and a route's RouteKey (per API) count too. An alarm's MetricName
    names what it reads, nothing it claims.
    """
    names = set()
    for resource in resources.values():
        props = resource.get("Properties", {})
        kind = resource["Type"]
        for prop, value in props.items():
            if prop == "MetricName":
                continue
            if prop.endswith("Name") and isinstance(value, str) and not re.fullmatch(r"<[^<>]*>", value):
                names.add((f"{kind} {prop}", value))
        if kind == "AWS::IAM::Role" and "Path" in props:
            names.add(("IAM role path", props["Path"]))
        if kind == "AWS::ApiGatewayV2::Route":
            names.add((f"route on {props.get('ApiId')}", props.get("RouteKey")))
    return names


# ---------------------------------------------------------------------------------------------
# The usage metrics (CONTRACT U1, U4): the dashboard's queries and the route alarms against the
# metrics, dimension sets and labels the code emits


class Emitted:
    """What the EMF documents hold: {metric: {dimension set (frozenset)}}, and the labels a
    bounded dimension takes ({"Outcome": {...}, "Method": {...}})."""

    def __init__(self, metrics, labels, namespace):
        self.metrics = metrics
        self.labels = labels
        # DEFAULT_NAMESPACE, the namespace when MCP_METRICS_NAMESPACE is unset.
        self.namespace = namespace
        self.dimensions = {d for sets in metrics.values() for s in sets for d in s}

    def sets_of(self, metric):
        return sorted(sorted(s) for s in self.metrics.get(metric, ()))


def rust_code(path):
    """A Rust file without its // comments: the doc comments describe metrics, the code emits."""
    with open(path, encoding="utf-8") as f:
        return re.sub(r"//[^\n]*", "", f.read())


def function_body(code, name):
    """The body of `fn name` (between its braces), or None."""
    match = re.search(r"\bfn " + name + r"\b[^{;]*\{", code)
    if not match:
        return None
    depth, end = 1, match.end()
    while depth and end < len(code):
        depth += {"{": 1, "}": -1}.get(code[end], 0)
        end += 1
    return code[match.end() : end - 1]


def emitted_metrics():
    """The metrics of METRICS_SOURCE, each with the dimension sets it is emitted under.

    The constants [&str; N] named *_DIMENSIONS are the dimension sets and *_METRICS the metric
    names. The formatter's default sets (`let dimensions = vec![...]` in `new`) apply to every
    metric the document writes with a unit (`writer.value("Name", &AsCount::from(..))`, not
    NoMetric); each `MetricDirective { dimensions: vec![..], metrics: .. }` declares its metrics,
    a *_METRICS constant or `metric("Name", ..)` each, under its sets. Anything the reading
    cannot place is a problem, so that a change of the code's shape fails here, not silently.
    """
    path = METRICS_SOURCE
    code = rust_code(path)
    arrays = {
        name: re.findall(r'"([^"]*)"', items)
        for name, items in re.findall(r"\bconst ([A-Z_]+): \[&str; \d+\] = \[([^\]]*)\];", code)
    }
    sets = {name: frozenset(v) for name, v in arrays.items() if name.endswith("_DIMENSIONS")}
    groups = {name: v for name, v in arrays.items() if name.endswith("_METRICS")}
    metrics = {}

    def declare(names, set_names, where):
        if not names or not set_names:
            problem(path, f"{where}: read no metrics or no dimension sets ({names}, {set_names})")
        for set_name in set_names:
            if set_name not in sets:
                problem(path, f"{where}: {set_name} is not a [&str; N] constant of dimensions")
        for name in names:
            metrics.setdefault(name, set()).update(sets[s] for s in set_names if s in sets)

    new = function_body(code, "new") or ""
    default = re.search(r"let dimensions = vec!\[(.*?)\];", new, re.S)
    default_sets = re.findall(r"\b([A-Z_]+_DIMENSIONS)\b", default.group(1)) if default else []
    written = re.findall(r'\.value\(\s*"(\w+)",\s*&(\w+)::from\(', code)
    declare([n for n, wrapper in written if wrapper != "NoMetric"], default_sets, "default sets")
    directives = re.findall(r"\bMetricDirective\s*\{(.*?)\bnamespace\b", code, re.S)
    if not directives:
        problem(path, "read no MetricDirective")
    for body in directives:
        dimensions = re.search(r"dimensions:\s*vec!\[(.*?)\]\s*,", body, re.S)
        listed = re.search(r"\bmetrics:(.*)", body, re.S)
        listed = listed.group(1) if listed else ""
        names = [m for g in re.findall(r"\b([A-Z_]+_METRICS)\b", listed) for m in groups.get(g, [])]
        names += re.findall(r'\bmetric\(\s*"(\w+)"', listed)
        declare(
            names,
            re.findall(r"\b([A-Z_]+_DIMENSIONS)\b", dimensions.group(1)) if dimensions else [],
            "a MetricDirective",
        )
    in_groups = {m for names in groups.values() for m in names}
    if not groups or in_groups != set(metrics):
        problem(
            path,
            f"the *_METRICS constants {sorted(in_groups)} and the metrics the formatter declares "
            f"{sorted(metrics)} differ",
        )

    record = rust_code(RECORD_SOURCE)
    outcome = function_body(record, "outcome_dimension")
    method = function_body(record, "method_dimension")
    with open(METHODS_SOURCE, encoding="utf-8") as f:
        names = dict(re.findall(r'pub const (\w+): &str = "([^"]*)";', f.read()))
    labels = {"Outcome": set(), "Method": set()}
    if outcome is None or method is None:
        problem(RECORD_SOURCE, "no fn outcome_dimension or fn method_dimension to read labels from")
    else:
        labels["Outcome"] = set(re.findall(r'"([^"]*)"', outcome))
        # Literals, but a prefix that only matches (notifications/), and the methods it names.
        labels["Method"] = {m for m in re.findall(r'"([^"]*)"', method) if not m.endswith("/")}
        for constant in re.findall(r"\bmethods::(\w+)", method):
            if constant not in names:
                problem(METHODS_SOURCE, f"no pub const {constant} (named by {RECORD_SOURCE})")
            else:
                labels["Method"].add(names[constant])
    for dimension, values in labels.items():
        if not values:
            problem(RECORD_SOURCE, f"read no label of the {dimension} dimension")
    namespace = re.search(r'\bconst DEFAULT_NAMESPACE: &str = "([^"]*)";', code)
    if not namespace:
        problem(path, "no const DEFAULT_NAMESPACE")
    return Emitted(metrics, labels, namespace.group(1) if namespace else None)


def check_metric(where, code, metric, dimensions, filters):
    """A metric read under exactly `dimensions` (a dimension set, as SCHEMA, a SEARCH schema or
    an alarm's Dimensions name it), `filters` [(dimension, value)] among them: the code emits
    the metric under that set, and a bounded dimension's value is one of its labels."""
    dimensions = set(dimensions)
    for dimension in sorted(dimensions - code.dimensions):
        problem(where, f"dimension {dimension!r} is not one the gateway emits {sorted(code.dimensions)}")
    if metric not in code.metrics:
        problem(where, f"metric {metric!r} is not one the gateway emits {sorted(code.metrics)}")
    elif frozenset(dimensions) not in code.metrics[metric]:
        problem(
            where,
            f"{metric} has no dimension set {sorted(dimensions)}: the gateway emits it under "
            f"{code.sets_of(metric)} ({METRICS_SOURCE})",
        )
    for dimension, value in filters:
        if dimension not in dimensions:
            problem(where, f"filters on {dimension}, which the set {sorted(dimensions)} lacks")
        elif dimension in code.labels and value not in code.labels[dimension]:
            problem(
                where,
                f"{dimension} {value!r} is not a label the gateway writes "
                f"{sorted(code.labels[dimension])} ({RECORD_SOURCE})",
            )


# A Metrics Insights query as the dashboard writes them: FROM SCHEMA (a bare namespace would add
# up every dimension set of a metric: the request metrics would count twice), WHERE of
# `Dimension = 'value'` terms joined by AND, GROUP BY, ORDER BY, LIMIT.
MI_QUERY = re.compile(
    r"SELECT (?P<function>AVG|SUM|MIN|MAX|COUNT)\((?P<metric>\w+)\) FROM "
    r'(?:SCHEMA\("(?P<namespace>[^"]*)"(?P<dimensions>(?:, ?\w+)*)\)|(?P<bare>\S+))'
    r"(?: WHERE (?P<where>.+?))?(?: GROUP BY (?P<group>\w+(?:, ?\w+)*))?"
    r"(?: ORDER BY (?:AVG|SUM|MIN|MAX|COUNT)\(\) (?:ASC|DESC))?(?: LIMIT \d+)?$"
)
MI_TERM = re.compile(r"(\w+) = '([^']*)'")
# A SEARCH with a quoted namespace and schema (exactly these dimensions), MetricName="..." and
# Dimension="value" terms (quoted: exact matches), a statistic and a period.
SEARCH_QUERY = re.compile(
    r"""SEARCH\('\{"(?P<namespace>[^"]*)"(?P<dimensions>(?:,\w+)*)\}(?P<terms>(?: \w+="[^"]*")+)', """
    r"""'(?P<stat>\w+(?:\.\d+)?)', (?P<period>\d+)\)$"""
)
SEARCH_TERM = re.compile(r' (\w+)="([^"]*)"')
STATISTICS = {"Sum", "Average", "Minimum", "Maximum", "SampleCount"}
PERCENTILE = re.compile(r"p(100|[1-9]?[0-9](\.[0-9]+)?)")
# What the dashboard shows (CONTRACT U4): (statistic, metric, filter, one line per).
DASHBOARD_VIEWS = {
    ("SUM", "Requests", (), ("Route",)),
    ("SUM", "Requests", (("Outcome", "rpc_error"),), ("Route",)),
    ("SUM", "Requests", (("Outcome", "tool_error"),), ("Route",)),
    ("p50", "Latency", (), ("Route",)),
    ("p99", "Latency", (), ("Route",)),
    ("SUM", "ToolCalls", (), ("Route", "Tool")),
    ("SUM", "RateLimited", (), ("Route",)),
    ("SUM", "ColdStarts", (), ("Route",)),
}


def check_expression(where, expression, code, namespace):
    """The view (statistic, metric, filters, per) of a dashboard expression, after checking it."""
    query = MI_QUERY.fullmatch(expression)
    if query:
        if query["bare"]:
            problem(where, f"FROM {query['bare']}: name the dimension set with SCHEMA(...)")
            return None
        dimensions = [d.strip() for d in query["dimensions"].split(",") if d.strip()]
        filters = []
        for term in re.split(r" AND ", query["where"]) if query["where"] else []:
            match = MI_TERM.fullmatch(term)
            if not match:
                problem(where, f"WHERE term {term!r} is not Dimension = 'value'")
                continue
            filters.append(match.groups())
        per = tuple(d.strip() for d in (query["group"] or "").split(",") if d.strip())
        for dimension in per:
            if dimension not in dimensions:
                problem(where, f"GROUP BY {dimension}, which SCHEMA {dimensions} lacks")
        statistic = query["function"]
    else:
        query = SEARCH_QUERY.fullmatch(expression)
        if not query:
            problem(where, f"{expression!r} is neither a Metrics Insights query FROM SCHEMA nor a SEARCH the check reads")
            return None
        dimensions = [d for d in query["dimensions"].split(",") if d]
        terms = SEARCH_TERM.findall(query["terms"])
        metric = [v for k, v in terms if k == "MetricName"]
        if len(metric) != 1:
            problem(where, f"a SEARCH names exactly one MetricName=\"...\", {expression!r} does not")
            return None
        filters = [(k, v) for k, v in terms if k != "MetricName"]
        statistic = query["stat"]
        if statistic not in STATISTICS and not PERCENTILE.fullmatch(statistic):
            problem(where, f"statistic {statistic!r} of {expression!r}")
        statistic = statistic.upper() if statistic in STATISTICS else statistic
        if statistic == "AVERAGE":
            statistic = "AVG"
        per = tuple(d for d in dimensions if d not in dict(filters))
        query = {"metric": metric[0], "namespace": query["namespace"]}
    if query["namespace"] != namespace:
        problem(where, f"namespace {query['namespace']!r}, not the functions' MCP_METRICS_NAMESPACE {namespace!r}")
    check_metric(where, code, query["metric"], dimensions, filters)
    return (statistic, query["metric"], tuple(sorted(filters)), per)


def check_dashboard(path, resources, code):
    """The rendered dashboard (CHECK_NAMESPACE, CHECK_REGION): every widget's metrics checked
    against the code, the layout on the 24-column grid without overlap, the views of
    DASHBOARD_VIEWS present; returns its widgets."""
    dashboards = of_type(resources, "AWS::CloudWatch::Dashboard")
    if len(dashboards) != 1:
        problem(path, f"expected one dashboard of every route, found {sorted(dashboards)}")
        return None
    (name, dashboard), = dashboards.items()
    body = dashboard["Properties"].get("DashboardBody")
    try:
        widgets = json.loads(body)["widgets"]
    except (TypeError, ValueError, KeyError) as error:
        problem(path, f"{name}: DashboardBody is not a dashboard's JSON ({error})")
        return None
    views = set()
    cells = {}
    for index, widget in enumerate(widgets):
        props = widget.get("properties", {})
        where = f"{path}: {name} widget {index} ({props.get('title', widget.get('type'))!r})"
        geometry = [widget.get(k) for k in ("x", "y", "width", "height")]
        if not all(isinstance(v, int) for v in geometry):
            problem(where, f"x, y, width, height must be whole numbers, are {geometry}")
            continue
        x, y, width, height = geometry
        if x < 0 or y < 0 or width < 1 or height < 1 or x + width > 24:
            problem(where, f"x {x} y {y} width {width} height {height} is off the 24-column grid")
        for cell in ((i, j) for i in range(x, x + width) for j in range(y, y + height)):
            if cell in cells:
                problem(where, f"overlaps widget {cells[cell]}")
                break
            cells[cell] = index
        if widget.get("type") == "text":
            continue
        if widget.get("type") != "metric":
            problem(where, f"type {widget.get('type')!r}: the check reads metric and text widgets")
            continue
        if props.get("region") != CHECK_REGION:
            problem(where, f"region {props.get('region')!r} must be ${{AWS::Region}}")
        if not props.get("title"):
            problem(where, "a metric widget needs a title (infra/README.md names each)")
        ids = []
        for entry in props.get("metrics", []):
            options = next((e for e in entry if isinstance(e, dict)), {}) if isinstance(entry, list) else {}
            names = [e for e in entry if isinstance(e, str)] if isinstance(entry, list) else []
            if options.get("id") is not None:
                ids.append(options["id"])
                if not re.fullmatch(r"[a-z][A-Za-z0-9_]*", options["id"]):
                    problem(where, f"id {options['id']!r} must start with a lowercase letter")
            if "expression" in options and not names:
                view = check_expression(where, options["expression"], code, CHECK_NAMESPACE)
            elif len(names) >= 2 and len(names) % 2 == 0 and "." not in names:
                # ["namespace", "metric", "Dimension", "value", ..., {options}]
                if names[0] != CHECK_NAMESPACE:
                    problem(where, f"namespace {names[0]!r}, not {CHECK_NAMESPACE!r}")
                dimensions = dict(zip(names[2::2], names[3::2]))
                check_metric(where, code, names[1], dimensions, list(dimensions.items()))
                view = None
            else:
                problem(where, f"metrics entry {entry} is neither an expression nor a plain metric")
                view = None
            if view:
                views.add(view)
        if not props.get("metrics"):
            problem(where, "a metric widget without metrics")
        if len(ids) != len(set(ids)):
            problem(where, f"ids {ids} repeat")
    for view in sorted(DASHBOARD_VIEWS - views):
        problem(path, f"{name}: no widget shows {view[0]}({view[1]}) where {dict(view[2])} per {view[3]}")
    return widgets


def check_dashboard_picture(path, widgets):
    """infra/dashboard/render.py reads the same widgets from the template's text as CloudFormation
    renders, and the committed SVG is what it draws now."""
    spec = importlib.util.spec_from_file_location("dashboard_render", DASHBOARD_RENDERER)
    renderer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(renderer)
    read = renderer.widgets(path)
    rendered = json.dumps(widgets, sort_keys=True)
    for value, placeholder in (
        (CHECK_NAMESPACE, renderer.PLACEHOLDERS["MetricsNamespace"]),
        (CHECK_REGION, renderer.PLACEHOLDERS["AWS::Region"]),
        (ENVIRONMENT_STACK, renderer.PLACEHOLDERS["AWS::StackName"]),
    ):
        rendered = rendered.replace(json.dumps(value)[1:-1], json.dumps(placeholder)[1:-1])
    if json.dumps(read, sort_keys=True) != rendered:
        problem(DASHBOARD_RENDERER, f"reads other widgets from {path} than CloudFormation renders")
    try:
        with open(renderer.SVG, encoding="utf-8") as f:
            committed = f.read()
    except FileNotFoundError:
        committed = None
    if committed != renderer.draw(read):
        problem(
            os.path.relpath(renderer.SVG),
            f"is not the layout of {path}'s dashboard: run python3 {DASHBOARD_RENDERER} and commit it",
        )


def check_alarm_template(path, template):
    """Each alarm's threshold is a parameter of the route template, and its actions are the
    parameter AlarmTopicArn under a condition that holds exactly when it is not empty."""
    parameters = template.get("Parameters", {})
    conditions = template.get("Conditions", {})
    if parameters.get("AlarmTopicArn", {}).get("Default") != "":
        problem(path, "AlarmTopicArn must default to empty (no actions)")
    alarms = of_type(template["Resources"], "AWS::CloudWatch::Alarm")
    for name, alarm in alarms.items():
        props = alarm.get("Properties", {})
        threshold = props.get("Threshold")
        if not (isinstance(threshold, dict) and threshold.get("Ref") in parameters):
            problem(path, f"{name}: Threshold must be !Ref of a parameter, is {threshold}")
        for actions in ("AlarmActions", "OKActions"):
            value = props.get(actions)
            condition = value.get("Fn::If", [None])[0] if isinstance(value, dict) else None
            expected = [condition, [{"Ref": "AlarmTopicArn"}], {"Ref": "AWS::NoValue"}]
            if value != {"Fn::If": expected} or conditions.get(condition) != {
                "Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmTopicArn"}, ""]}]
            }:
                problem(
                    path,
                    f"{name}: {actions} must be !If [<condition>, [!Ref AlarmTopicArn], "
                    "!Ref AWS::NoValue], the condition !Not [!Equals [!Ref AlarmTopicArn, \"\"]]",
                )


def check_alarms(where, resources, key, code, topic):
    """The rendered route's alarms: on the route's own series (Route = the key, in the imported
    namespace) of metrics and dimension sets the code emits, missing data not breaching, the
    topic as actions when given, none else; an error-rate alarm (FailedRequests / Requests) and
    a p99 latency alarm among them."""
    namespace = f"<import:{ENVIRONMENT_STACK}-MetricsNamespace>"
    watched = set()
    for name, alarm in of_type(resources, "AWS::CloudWatch::Alarm").items():
        props = alarm["Properties"]
        here = f"{where} {name}"
        if props.get("TreatMissingData") != "notBreaching":
            problem(here, f"TreatMissingData is {props.get('TreatMissingData')!r}, expected notBreaching")
        for actions in ("AlarmActions", "OKActions"):
            expected = [topic] if topic else None
            if props.get(actions) != expected:
                problem(here, f"{actions} is {props.get(actions)}, expected {expected} (AlarmTopicArn {topic!r})")
        read = []
        if "MetricName" in props:
            statistic = props.get("ExtendedStatistic") or props.get("Statistic")
            read.append((props, statistic))
            if "Metrics" in props:
                problem(here, "MetricName and Metrics together")
        else:
            queries = props.get("Metrics", [])
            ids = {q.get("Id") for q in queries}
            if sum(1 for q in queries if q.get("ReturnData", True)) != 1:
                problem(here, "exactly one of Metrics must return data (the alarm's value)")
            for query in queries:
                if "MetricStat" in query:
                    read.append((query["MetricStat"].get("Metric", {}), query["MetricStat"].get("Stat")))
                elif "Expression" in query:
                    unknown = set(re.findall(r"\b[a-z]\w*", query["Expression"])) - ids
                    if unknown:
                        problem(here, f"the expression {query['Expression']!r} names no metric {sorted(unknown)}")
                else:
                    problem(here, f"a query with neither MetricStat nor Expression: {query}")
        if not read:
            problem(here, "reads no metric")
        for metric, statistic in read:
            if metric.get("Namespace") != namespace:
                problem(here, f"Namespace {metric.get('Namespace')!r}, expected the environment's {namespace}")
            dimensions = {d.get("Name"): d.get("Value") for d in metric.get("Dimensions", [])}
            if dimensions.get("Route") != key:
                problem(here, f"Route dimension {dimensions.get('Route')!r}, expected the route key {key!r}")
            filters = [(d, v) for d, v in dimensions.items() if d != "Route"]
            check_metric(here, code, metric.get("MetricName"), dimensions, filters)
            watched.add((metric.get("MetricName"), statistic))
    if not {("FailedRequests", "Sum"), ("Requests", "Sum")} <= watched:
        problem(where, "no error-rate alarm (Sum of FailedRequests over Sum of Requests of the route)")
    if ("Latency", "p99") not in watched:
        problem(where, "no p99 latency alarm (Latency, ExtendedStatistic p99)")


# ---------------------------------------------------------------------------------------------
# The environment


def auth_table(path, resources):
    """The delegation table's logical name, after checking its shape; None when there is none."""
    tables = of_type(resources, "AWS::DynamoDB::Table")
    if len(tables) != 1:
        problem(path, f"expected one DynamoDB delegation table, found {sorted(tables)}")
        return None
    (name, table), = tables.items()
    props = table.get("Properties", {})
    if props.get("BillingMode") != "PAY_PER_REQUEST":
        problem(path, f"{name}: BillingMode must be PAY_PER_REQUEST (on-demand)")
    if props.get("KeySchema") != [{"AttributeName": "pk", "KeyType": "HASH"}]:
        problem(path, f"{name}: KeySchema must be the string partition key pk alone")
    if props.get("AttributeDefinitions") != [{"AttributeName": "pk", "AttributeType": "S"}]:
        problem(path, f"{name}: AttributeDefinitions must define pk as a string (S)")
    if props.get("TimeToLiveSpecification") != {"AttributeName": "ttl", "Enabled": True}:
        problem(path, f"{name}: TimeToLiveSpecification must enable TTL on ttl")
    return name


def is_get_att(value, resource, attribute):
    get_att = value.get("Fn::GetAtt") if isinstance(value, dict) else None
    if isinstance(get_att, str):
        get_att = get_att.split(".", 1)
    return resource is not None and get_att == [resource, attribute]


def check_environment(binaries, variables, code):
    """Checks template.yaml; returns its export names and rendered names and paths."""
    path = ENVIRONMENT
    template = load(path)
    if template is None:
        return None
    check_lint_reasons(path, template)
    resources = template["Resources"]
    functions = of_type(resources, "AWS::Serverless::Function")
    if not functions:
        problem(path, "expected the dynamic-routing function, found no function")
    for kind in ("AWS::Serverless::HttpApi", "AWS::Serverless::Api"):
        if of_type(resources, kind):
            problem(
                path,
                f"{kind} defines the API by an OpenAPI Body, which route stacks' routes do not survive",
            )
    table = auth_table(path, resources)
    manifest_arn = {"Fn::Sub": "arn:${AWS::Partition}:s3:::${ManifestBucket}/${ManifestKey}"}
    endpoints = {}
    for name, resource in functions.items():
        props = merged_function(template, resource)
        _, env = check_function(path, name, props, resource.get("Metadata", {}), binaries, variables)
        if env.get("MCP_REGISTRY_SOURCE") != {"Fn::Sub": "s3://${ManifestBucket}/${ManifestKey}"}:
            problem(path, f"{name}: MCP_REGISTRY_SOURCE must be the manifest object")
        if table is not None and env.get("MCP_AUTH_TABLE") != {"Ref": table}:
            problem(path, f"{name}: MCP_AUTH_TABLE must be the delegation table {table}")
        endpoints[name] = (env.get("MCP_ENDPOINT_PATH"), env.get("MCP_ROUTING"))
        if "Events" in props:
            problem(path, f"{name}: Events make SAM write an OpenAPI Body; use ApiGatewayV2 routes")
        granted = set()
        statements = [s for p in props.get("Policies", []) for s in p.get("Statement", [])]
        # CONTRACT X10, M5, X12: the conditional tool grants, one each.
        check_tool_grants(f"{path}: {name}", statements)
        for statement in statements:
            if tool_grant(statement) is not None:
                continue
            actions = actions_of(statement)
            if statement.get("Effect") != "Allow" or actions not in (
                ["s3:GetObject"],
                ["dynamodb:UpdateItem"],
            ):
                problem(
                    path,
                    f"{name}: a statement must allow s3:GetObject or dynamodb:UpdateItem alone, "
                    f"found {statement}",
                )
                continue
            if actions == ["s3:GetObject"] and statement.get("Resource") != manifest_arn:
                problem(path, f"{name}: s3:GetObject must be scoped to the manifest object")
            elif actions == ["dynamodb:UpdateItem"] and not is_get_att(
                statement.get("Resource"), table, "Arn"
            ):
                problem(path, f"{name}: dynamodb:UpdateItem must be scoped to the table's ARN")
            granted.add(actions[0])
        for action in ("s3:GetObject", "dynamodb:UpdateItem"):
            if action not in granted:
                problem(path, f"{name}: no {action} permission (the manifest, the delegation table)")
        check_log_group(path, name, props, resources)
    check_tool_grant_conditions(path, template)

    # Domain resources exist only with a domain.
    domain_condition = template.get("Conditions", {}).get("HasDomain")
    if '{"Ref": "DomainName"}' not in json.dumps(domain_condition):
        problem(path, "the condition HasDomain must test the parameter DomainName")
    for name, resource in resources.items():
        if resource["Type"] in ("AWS::ApiGatewayV2::DomainName", "AWS::ApiGatewayV2::ApiMapping"):
            if resource.get("Condition") != "HasDomain":
                problem(path, f"{name}: a custom-domain resource needs Condition HasDomain")

    # Exports named after the stack.
    outputs = template.get("Outputs", {})
    exported = {}
    for name, output in outputs.items():
        export = output.get("Export", {}).get("Name")
        if export is None:
            continue
        match = re.fullmatch(r"\$\{AWS::StackName\}-([A-Za-z0-9]+)", export.get("Fn::Sub", ""))
        if not match:
            problem(path, f"output {name}: export name {export} must be !Sub ${{AWS::StackName}}-<name>")
            continue
        exported[match.group(1)] = name
        if "Condition" in output:
            problem(path, f"output {name}: an export route stacks import cannot be conditional")
    if set(exported) != EXPORTS:
        problem(path, f"exports {sorted(exported)}, expected {sorted(EXPORTS)}")

    apis = of_type(resources, "AWS::ApiGatewayV2::Api")
    if len(apis) != 1:
        problem(path, f"expected one HTTP API, found {sorted(apis)}")
        return None
    (api_name, api), = apis.items()
    if {"Body", "BodyS3Location", "CorsConfiguration"} & set(api["Properties"]):
        problem(path, f"{api_name}: no Body (route stacks add routes) and no CorsConfiguration (H9)")
    if api["Properties"].get("ProtocolType") != "HTTP":
        problem(path, f"{api_name}: ProtocolType must be HTTP")
    stages = of_type(resources, "AWS::ApiGatewayV2::Stage")
    if len(stages) != 1:
        problem(path, f"expected one stage, found {sorted(stages)}")
    for name, stage in stages.items():
        props = stage["Properties"]
        if props.get("StageName") != "$default" or props.get("AutoDeploy") is not True:
            problem(path, f"{name}: the stage must be $default with AutoDeploy (for route stacks)")
        for limit in ("ThrottlingBurstLimit", "ThrottlingRateLimit"):
            if limit not in props.get("DefaultRouteSettings", {}):
                problem(path, f"{name} lacks DefaultRouteSettings.{limit} (the flood floor)")
    for export, output in [
        ("ApiId", {"Ref": api_name}),
        ("ApiEndpoint", {"Fn::GetAtt": [api_name, "ApiEndpoint"]}),
        ("AuthTableName", {"Ref": table}),
        ("AuthTableArn", {"Fn::GetAtt": [table, "Arn"]}),
        ("MetricsNamespace", {"Ref": "MetricsNamespace"}),
    ]:
        value = outputs.get(exported.get(export), {}).get("Value")
        if isinstance(value, dict) and isinstance(value.get("Fn::GetAtt"), str):
            value = {"Fn::GetAtt": value["Fn::GetAtt"].split(".", 1)}
        if export in exported and value != output:
            problem(path, f"export {export} must be {output}, is {value}")

    cfn = transformed(template)
    # The dashboard and the functions' namespace, rendered with a namespace and a region of the
    # check's own (CHECK_NAMESPACE, CHECK_REGION), so that a value written in place shows.
    rendered = Renderer(
        cfn, ENVIRONMENT_STACK, {"ManifestBucket": BUCKET, "MetricsNamespace": CHECK_NAMESPACE}
    )
    rendered.params["AWS::Region"] = CHECK_REGION
    resources_r = rendered.resources()
    for name, function in of_type(resources_r, "AWS::Lambda::Function").items():
        namespace = function["Properties"]["Environment"]["Variables"].get("MCP_METRICS_NAMESPACE")
        if namespace != CHECK_NAMESPACE:
            problem(path, f"{name}: MCP_METRICS_NAMESPACE must be the parameter MetricsNamespace, is {namespace!r}")
    default = template.get("Parameters", {}).get("MetricsNamespace", {}).get("Default")
    if default != code.namespace:
        problem(path, f"MetricsNamespace defaults to {default!r}, the code to {code.namespace!r}")
    widgets = check_dashboard(path, resources_r, code)
    if widgets is not None:
        check_dashboard_picture(path, widgets)
    names = set()
    for domain in ("", "mcp.example.com"):
        rendered = Renderer(
            cfn,
            ENVIRONMENT_STACK,
            {
                "ManifestBucket": BUCKET,
                "DomainName": domain,
                "CertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/x" if domain else "",
            },
        )
        resources_r = rendered.resources()
        routes = api_routes(path, resources_r, f"<{api_name}>")
        paths = check_paths(path, routes, endpoints)
        if WELL_KNOWN not in paths:
            problem(path, f"no function answers the root metadata path {WELL_KNOWN} (A10)")
        check_permissions(path, resources_r, f"<{api_name}>", routes)
        names |= physical_names(resources_r)
        base = f"https://{domain}" if domain else f"<{api_name}.ApiEndpoint>"
        outputs_r = rendered.outputs()
        if exported.get("PublicBaseUrl") and outputs_r[exported["PublicBaseUrl"]]["Value"] != base:
            problem(path, f"export PublicBaseUrl must be {base} (domain {domain!r})")
        values = [o["Value"] for o in outputs_r.values()]
        for name, (endpoint, routing) in endpoints.items():
            public = endpoint if routing == "fixed" else endpoint + "/{routeKey}"
            if base + public not in values:
                problem(path, f"Outputs lack the public URL of {name} ({base}{public})")
            resource_url = resources_r[name]["Properties"]["Environment"]["Variables"].get(
                "MCP_RESOURCE_URL"
            )
            if resource_url != base + endpoint:
                problem(path, f"{name}: MCP_RESOURCE_URL is {resource_url}, expected {base}{endpoint}")
        routes_by_domain = routes
    # The tool grants after the SAM transform: none by default, the listed ARNs when filled in.
    for filled in (False, True):
        rendered = Renderer(
            cfn,
            ENVIRONMENT_STACK,
            {"ManifestBucket": BUCKET, **(TOOL_VALUES if filled else {})},
        )
        resources_r = rendered.resources()
        for name, function in of_type(resources_r, "AWS::Lambda::Function").items():
            role = function["Properties"].get("Role", "")
            role = role[1 : -len(".Arn>")] if role.startswith("<") and role.endswith(".Arn>") else None
            if of_type(resources_r, "AWS::IAM::Role").get(role) is None:
                problem(path, f"{name}: its Role is not a role of the template")
                continue
            statements = [
                s
                for policy in resources_r[role]["Properties"].get("Policies", [])
                for s in policy.get("PolicyDocument", {}).get("Statement", [])
            ]
            check_rendered_tool_grants(f"{path}: {name}", statements, filled)
    return {"exports": set(exported), "names": names, "routes": routes_by_domain, "api": api_name}


# ---------------------------------------------------------------------------------------------
# The route template


def check_imports(path, node, exports, where="", inside_import=False):
    """Every reference to the environment is an import of an export it defines."""
    if isinstance(node, list):
        for i, value in enumerate(node):
            check_imports(path, value, exports, f"{where}[{i}]", inside_import)
        return
    if not isinstance(node, dict):
        if (
            isinstance(node, str)
            and "${EnvironmentStack}" in node
            and not inside_import
            and ".Description" not in where
        ):
            problem(path, f"{where}: names the environment outside an Fn::ImportValue")
        return
    if "Fn::ImportValue" in node:
        value = node["Fn::ImportValue"]
        match = isinstance(value, dict) and re.fullmatch(
            r"\$\{EnvironmentStack\}-([A-Za-z0-9]+)", str(value.get("Fn::Sub", ""))
        )
        if not match:
            problem(path, f"{where}: import {value} must be !Sub ${{EnvironmentStack}}-<export>")
        elif match.group(1) not in exports:
            problem(path, f"{where}: imports {match.group(1)}, which {ENVIRONMENT} does not export")
        return
    if node.get("Ref") == "EnvironmentStack" and not inside_import:
        problem(path, f"{where}: names the environment outside an Fn::ImportValue")
    for key, value in node.items():
        check_imports(path, value, exports, f"{where}.{key}", inside_import)


def route_stack(key):
    return f"mcp-route-{key}"


def render_route(cfn, key, manifest_key="", tools=None):
    return Renderer(
        cfn,
        route_stack(key),
        {
            "RouteKey": key,
            "EnvironmentStack": ENVIRONMENT_STACK,
            "ManifestBucket": BUCKET,
            "ManifestKey": manifest_key,
            "ManifestRevision": "1",
            **(tools or {}),
        },
    )


def check_route(binaries, variables, environment, code):
    path = ROUTE
    template = load(path)
    if template is None:
        return
    check_lint_reasons(path, template)
    parameters = template.get("Parameters", {})
    missing = sorted((ROUTE_PASSED | ROUTE_SETTINGS) - set(parameters))
    if missing:
        problem(path, f"lacks the parameters {missing}")
    undefaulted = sorted(
        n for n, p in parameters.items() if "Default" not in p and n not in ROUTE_PASSED
    )
    if undefaulted:
        problem(
            path,
            f"parameters {undefaulted} need a default: a route's samconfig.toml sets only "
            f"{sorted(ROUTE_PASSED)}",
        )
    if parameters.get("ManifestKey", {}).get("Default") != "":
        problem(path, "ManifestKey must default to empty (routes/<RouteKey>/manifest.json)")
    resources = template["Resources"]
    for name, resource in resources.items():
        if resource["Type"] in ENVIRONMENT_ONLY:
            problem(path, f"{name}: {resource['Type']} belongs to the environment; import it instead")
        if resource["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::User"):
            problem(path, f"{name}: the route's only permissions are its role's inline policy")
    functions = of_type(resources, "AWS::Serverless::Function")
    if len(functions) != 1:
        problem(path, f"expected one function, found {sorted(functions)}")
        return
    (function, resource), = functions.items()
    props = merged_function(template, resource)
    binary, env = check_function(
        path, function, props, resource.get("Metadata", {}), binaries, variables
    )
    if binary != "mcp-core":
        problem(path, f"{function}: must run the fixed-routing binary mcp-core, runs {binary!r}")
    if env.get("MCP_ENDPOINT_PATH") != {"Fn::Sub": "/mcp/${RouteKey}"}:
        problem(path, f"{function}: MCP_ENDPOINT_PATH must be !Sub /mcp/${{RouteKey}}")
    if env.get("MCP_ROUTING") != "fixed":
        problem(path, f"{function}: MCP_ROUTING must be fixed")
    if "Policies" in props or "Events" in props:
        problem(path, f"{function}: no SAM Policies or Events; its role and routes are explicit")
    group = check_log_group(path, function, props, resources)
    role = props.get("Role")
    role = role.get("Fn::GetAtt") if isinstance(role, dict) else None
    role = role.split(".", 1) if isinstance(role, str) else role
    if not role or role[1:] != ["Arn"] or resources.get(role[0], {}).get("Type") != "AWS::IAM::Role":
        problem(path, f"{function}: Role must be !GetAtt of the template's role")
        return
    role = role[0]
    # CONTRACT X10, M5, X12: the role's tool grants, before rendering resolves their conditions.
    check_tool_grant_conditions(path, template)
    check_tool_grants(
        f"{path}: {role}",
        [
            statement
            for policy in resources[role].get("Properties", {}).get("Policies", [])
            for statement in policy.get("PolicyDocument", {}).get("Statement", [])
        ],
    )
    if environment is None:
        return
    check_imports(path, template, environment["exports"])
    for name, output in template.get("Outputs", {}).items():
        if "Export" in output:
            problem(path, f"output {name}: a route stack exports nothing (so it can be deleted)")

    cfn = transformed(template)
    extra = sorted(
        n for n, r in cfn["Resources"].items() if r["Type"].startswith("AWS::IAM::") and n != role
    )
    if extra:
        problem(path, f"IAM resources {extra} besides the route's role (SAM Policies?)")
    rendered_names = {}
    for key in RENDERED_KEYS:
        # The tool parameters empty (the default), then filled in (TOOL_VALUES).
        for manifest_key, tools in (("", None), ("teams/custom.json", None), ("", TOOL_VALUES)):
            rendered = render_route(cfn, key, manifest_key, tools)
            resources_r = rendered.resources()
            where = f"{path} [RouteKey={key}, ManifestKey={manifest_key!r}" + (
                ", tool parameters filled]" if tools else "]"
            )
            object_key = manifest_key or f"routes/{key}/manifest.json"
            fprops = resources_r[function]["Properties"]
            variables_r = fprops["Environment"]["Variables"]
            expected = {
                "MCP_ENDPOINT_PATH": f"/mcp/{key}",
                "MCP_REGISTRY_SOURCE": f"s3://{BUCKET}/{object_key}",
                "MCP_AUTH_TABLE": f"<import:{ENVIRONMENT_STACK}-AuthTableName>",
                "MCP_RESOURCE_URL": f"<import:{ENVIRONMENT_STACK}-PublicBaseUrl>/mcp/{key}",
                "MCP_METRICS_NAMESPACE": f"<import:{ENVIRONMENT_STACK}-MetricsNamespace>",
            }
            for variable, value in expected.items():
                if variables_r.get(variable) != value:
                    problem(where, f"{variable} is {variables_r.get(variable)!r}, expected {value!r}")
            check_route_role(
                where,
                resources_r[role]["Properties"],
                {
                    "s3:GetObject": f"arn:aws:s3:::{BUCKET}/{object_key}",
                    "dynamodb:UpdateItem": f"<import:{ENVIRONMENT_STACK}-AuthTableArn>",
                    "logs": f"<{group}.Arn>",
                },
                bool(tools),
            )
            api = f"<import:{ENVIRONMENT_STACK}-ApiId>"
            routes = api_routes(where, resources_r, api)
            wanted = {
                f"ANY /mcp/{key}": function,
                f"ANY /mcp/{key}/{{proxy+}}": function,
                f"GET {WELL_KNOWN}/mcp/{key}": function,
            }
            if routes != wanted:
                problem(where, f"routes {routes}, expected {wanted}")
            check_paths(where, routes, {})
            check_permissions(where, resources_r, api, routes)
            url = rendered.outputs().get("RouteUrl", {}).get("Value")
            if url != f"<import:{ENVIRONMENT_STACK}-PublicBaseUrl>/mcp/{key}":
                problem(where, f"output RouteUrl is {url!r}, expected PublicBaseUrl + /mcp/{key}")
            rendered_names[key] = (physical_names(resources_r), resources_r)
        # The alarms (CONTRACT U4), without and with a topic for their actions.
        for topic in ("", ALARM_TOPIC):
            rendered = render_route(cfn, key, tools={"AlarmTopicArn": topic} if topic else None)
            check_alarms(
                f"{path} [RouteKey={key}, AlarmTopicArn={topic!r}]",
                rendered.resources(),
                key,
                code,
                topic,
            )
    check_alarm_template(path, template)

    # Side by side: nothing shared with the environment or the other route stack.
    environment_api = f"<{environment['api']}>"
    env_names = {
        (kind.replace(f"route on {environment_api}", "route on the API"), name)
        for kind, name in environment["names"]
    }
    api_kind = f"route on <import:{ENVIRONMENT_STACK}-ApiId>"
    seen = {}
    for key, (names, resources_r) in rendered_names.items():
        names = {(kind.replace(api_kind, "route on the API"), name) for kind, name in names}
        if not any(kind == "AWS::Lambda::Function FunctionName" for kind, _ in names):
            problem(path, "the function's name must be explicit (a team's IAM names it)")
        for kind, name in names:
            if (kind, name) in env_names:
                problem(path, f"[RouteKey={key}] {kind} {name} is also the environment's")
            if (kind, name) in seen:
                problem(path, f"[RouteKey={key}] {kind} {name} is also route {seen[(kind, name)]}'s")
            seen[(kind, name)] = key
        # A route stack's permissions let no other route's path invoke its function.
        for other, (_, other_resources) in rendered_names.items():
            if other == key:
                continue
            other_routes = [
                r["Properties"]["RouteKey"]
                for r in of_type(other_resources, "AWS::ApiGatewayV2::Route").values()
            ] + list(environment["routes"])
            for permission in of_type(resources_r, "AWS::Lambda::Permission").values():
                pattern = permission["Properties"].get("SourceArn", "")
                for route_key in other_routes:
                    for arn in invocation_arns(f"<import:{ENVIRONMENT_STACK}-ApiId>", route_key):
                        if fnmatch.fnmatchcase(arn, pattern):
                            problem(path, f"[RouteKey={key}] {pattern} lets {route_key} invoke it")


def check_route_role(where, role, scopes, filled):
    """The route role: lambda may assume it; it grants the three scopes, the tool grants
    (CONTRACT X10, M5, X12: none with the tool parameters empty, TOOL_STATEMENTS with them
    filled) and nothing else."""
    if role.get("ManagedPolicyArns"):
        problem(where, "the route role attaches managed policies")
    trust = role.get("AssumeRolePolicyDocument", {}).get("Statement", [])
    if [s.get("Principal") for s in trust] != [{"Service": "lambda.amazonaws.com"}]:
        problem(where, "the route role must be assumable by lambda.amazonaws.com alone")
    granted = set()
    statements = [
        s
        for policy in role.get("Policies", [])
        for s in policy.get("PolicyDocument", {}).get("Statement", [])
    ]
    check_rendered_tool_grants(where, statements, filled)
    for statement in statements:
        actions = set(actions_of(statement))
        if actions & TOOL_ACTIONS:
            continue
        plain = not {"NotAction", "NotResource", "Condition"} & set(statement)
        if statement.get("Effect") != "Allow" or not plain:
            problem(where, f"route role statement must be a plain Allow: {statement}")
            continue
        resource = statement.get("Resource")
        if actions <= LOG_ACTIONS:
            if resource != scopes["logs"]:
                problem(where, f"log permissions must be on the route's log group, not {resource}")
            granted |= actions
        elif actions in ({"s3:GetObject"}, {"dynamodb:UpdateItem"}):
            (action,) = actions
            if resource != scopes[action]:
                problem(where, f"{action} must be scoped to {scopes[action]}, is {resource}")
            granted.add(action)
        else:
            problem(
                where,
                f"route role grants {sorted(actions)}; only s3:GetObject, dynamodb:UpdateItem, "
                "its own logs and the tool grants",
            )
    for action in sorted(LOG_ACTIONS | {"s3:GetObject", "dynamodb:UpdateItem"}):
        if action not in granted:
            problem(where, f"the route role lacks {action}")


# ---------------------------------------------------------------------------------------------


def render(directory):
    """Writes the route template with each rendered key as its parameters' defaults."""
    template, matches = decode(ROUTE)
    if matches:
        for match in matches:
            print(f"{ROUTE}: {match}", file=sys.stderr)
        sys.exit(1)
    os.makedirs(directory, exist_ok=True)
    for key in RENDERED_KEYS:
        document = copy.deepcopy(template)
        for name, value in {
            "RouteKey": key,
            "EnvironmentStack": ENVIRONMENT_STACK,
            "ManifestBucket": BUCKET,
            "ManifestRevision": "1",
        }.items():
            document["Parameters"][name]["Default"] = value
        target = os.path.join(directory, f"route-{key}.json")
        with open(target, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=1)
        print(target)


def main():
    binaries = workspace_lambda_binaries()
    variables = gateway_variables()
    code = emitted_metrics()
    environment = check_environment(binaries, variables, code)
    check_route(binaries, variables, environment, code)


if __name__ == "__main__":
    if sys.argv[1:2] == ["render"] and len(sys.argv) == 3:
        render(sys.argv[2])
        sys.exit(0)
    main()
    for text in dict.fromkeys(problems):
        print(text, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(
        f"{ENVIRONMENT}: function, binary, MCP_* variables, API without Body, $default stage and "
        "throttling, optional domain, routes, delegation table, permissions, exports and the "
        f"dashboard's metrics ({METRICS_SOURCE}) and picture check out"
    )
    print(
        f"{ROUTE}: function, binary, MCP_* variables, role, routes and permissions on the imported "
        f"API, imports, names and alarms check out for RouteKey {' and '.join(RENDERED_KEYS)} "
        "beside the environment"
    )
