"""Checks the environment template (template.yaml) and the route template (infra/route.yaml)
against the workspace and against each other, beyond what cfn-lint and `sam validate --lint` see.

Every function (both templates):
- is a Rust function SAM builds with cargo-lambda (provided.al2023, bootstrap, arm64, BuildMethod
  rust-cargolambda) and its Binary names a Lambda binary the workspace builds;
- sets every MCP_* variable the gateway reads (shared/src/config/gateway.rs,
  shared/src/config/auth.rs) and docs/configuration.md documents, and no MCP_* variable the
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
- Outputs give the public URL and export, named after the stack, what route stacks import.

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
  Fn::ImportValue of exports the environment template defines; its URL is an output, not an export.

A cfn-lint rule silenced in a template's Metadata carries its reason in Metadata.LintSilenced.

Run from the repository root with the Python of .venv (infra/lint.sh does). With `render DIR`,
writes the route template rendered for each key of RENDERED_KEYS into DIR instead (JSON, the
keys as parameter defaults), for cfn-lint and `sam validate --lint`.
"""

import copy
import fnmatch
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
# RFC 9728 metadata of a resource at https://host/PATH lives at https://host/WELL_KNOWN/PATH.
WELL_KNOWN = "/.well-known/oauth-protected-resource"
# What the environment exports as ${AWS::StackName}-<name>, and route stacks import.
EXPORTS = {"ApiId", "ApiEndpoint", "PublicBaseUrl", "AuthTableName", "AuthTableArn"}
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


def gateway_variables():
    """MCP_* names read by the configuration code, and those listed in docs/configuration.md."""
    in_code = set()
    for source in VARIABLE_SOURCES:
        with open(source, encoding="utf-8") as f:
            in_code |= set(re.findall(r'"(MCP_[A-Z_]+)"', f.read()))
    with open(CONFIGURATION_GUIDE, encoding="utf-8") as f:
        in_guide = set(re.findall(r"^\| `(MCP_[A-Z_]+)`", f.read(), re.MULTILINE))
    if in_code != in_guide:
        problem(
            CONFIGURATION_GUIDE,
            f"configuration table and {' + '.join(VARIABLE_SOURCES)} differ: "
            f"code only {sorted(in_code - in_guide)}, guide only {sorted(in_guide - in_code)}",
        )
    return in_code, in_guide


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
    TableName, Name, DomainName, ...) and whose value is not just a reference to another
    resource; a role's Path and a route's RouteKey (per API) count too.
    """
    names = set()
    for resource in resources.values():
        props = resource.get("Properties", {})
        kind = resource["Type"]
        for prop, value in props.items():
            if prop.endswith("Name") and isinstance(value, str) and not re.fullmatch(r"<[^<>]*>", value):
                names.add((f"{kind} {prop}", value))
        if kind == "AWS::IAM::Role" and "Path" in props:
            names.add(("IAM role path", props["Path"]))
        if kind == "AWS::ApiGatewayV2::Route":
            names.add((f"route on {props.get('ApiId')}", props.get("RouteKey")))
    return names


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


def check_environment(binaries, variables):
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
    ]:
        value = outputs.get(exported.get(export), {}).get("Value")
        if isinstance(value, dict) and isinstance(value.get("Fn::GetAtt"), str):
            value = {"Fn::GetAtt": value["Fn::GetAtt"].split(".", 1)}
        if export in exported and value != output:
            problem(path, f"export {export} must be {output}, is {value}")

    cfn = transformed(template)
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


def check_route(binaries, variables, environment):
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
    environment = check_environment(binaries, variables)
    check_route(binaries, variables, environment)


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
        "throttling, optional domain, routes, delegation table, permissions and exports check out"
    )
    print(
        f"{ROUTE}: function, binary, MCP_* variables, role, routes and permissions on the imported "
        f"API, imports and names check out for RouteKey {' and '.join(RENDERED_KEYS)} beside the "
        "environment"
    )
