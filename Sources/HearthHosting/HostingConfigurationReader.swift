/// Reads and checks `firebase.json`'s `hosting` section into ``HostingSite``s, with errors
/// naming the key path (`hosting[1].redirects[0].type`).
enum HostingConfigurationReader {
    typealias Error = HostingConfigurationError

    static let siteKeys: Set<String> = [
        "site", "target", "public", "ignore", "rewrites", "redirects", "headers", "cleanUrls", "trailingSlash",
        "appAssociation", "i18n", "predeploy", "postdeploy", "source", "frameworksBackend",
    ]

    static func sites(_ hosting: HostingJSON) throws(Error) -> [HostingSite] {
        switch hosting {
        case .object:
            return [try site(hosting, at: "hosting")]
        case .array(let entries):
            guard !entries.isEmpty else { throw Error(.invalidValue, at: "hosting", "lists no site") }
            var sites: [HostingSite] = []
            var names: Set<String> = []
            for (index, entry) in entries.enumerated() {
                let path = "hosting[\(index)]"
                let site = try site(entry, at: path)
                if entries.count > 1, site.site == nil, site.target == nil {
                    throw Error(.missingKey, at: "\(path).site", "each of several sites needs a site or target name")
                }
                for name in [site.site, site.target].compactMap({ $0 }) where !names.insert(name).inserted {
                    throw Error(.invalidValue, at: path, "the name \(name) is used by an earlier site")
                }
                sites.append(site)
            }
            return sites
        default:
            throw Error(.wrongType, at: "hosting", "must be an object or an array of sites, not \(hosting.typeName)")
        }
    }

    static func site(_ value: HostingJSON, at path: String) throws(Error) -> HostingSite {
        let members = try object(value, at: path)
        for key in members.keys.sorted() where !siteKeys.contains(key) {
            throw Error(.unknownKey, at: "\(path).\(key)", "is not a Firebase Hosting setting")
        }
        if members["i18n"] != nil {
            throw Error(.unsupported, at: "\(path).i18n", "i18n rewrites are not supported by Hearth; serve localized pages by path")
        }
        if members["source"] != nil || members["frameworksBackend"] != nil {
            throw Error(
                .unsupported, at: "\(path).\(members["source"] != nil ? "source" : "frameworksBackend")",
                "web-framework sites are not supported; build the app and give its output folder as public")
        }
        guard let publicValue = members["public"] else {
            throw Error(.missingKey, at: "\(path).public", "names no public folder (the folder to serve)")
        }
        let publicFolder = try string(publicValue, at: "\(path).public")
        if publicFolder.hasPrefix("/") || publicFolder.split(separator: "/").contains("..") || publicFolder.isEmpty {
            throw Error(.invalidValue, at: "\(path).public", "must be a folder inside the project folder, such as public or dist/app")
        }
        var ignore: [GlobPattern]?
        if let list = members["ignore"] {
            ignore = []
            for (index, item) in try array(list, at: "\(path).ignore").enumerated() {
                let itemPath = "\(path).ignore[\(index)]"
                ignore?.append(try glob(try string(item, at: itemPath), options: [.relative, .dotFiles], at: itemPath))
            }
        }
        for key in ["predeploy", "postdeploy"] {
            // Deploy hooks belong to the Firebase CLI; checked for type, never run.
            if let hook = members[key] {
                switch hook {
                case .string: break
                case .array(let items):
                    for (index, item) in items.enumerated() { _ = try string(item, at: "\(path).\(key)[\(index)]") }
                default: throw Error(.wrongType, at: "\(path).\(key)", "must be a command or a list of commands")
                }
            }
        }
        var appAssociation = HostingSite.AppAssociation.auto
        if let value = members["appAssociation"] {
            let text = try string(value, at: "\(path).appAssociation")
            guard let parsed = HostingSite.AppAssociation(rawValue: text) else {
                throw Error(.invalidValue, at: "\(path).appAssociation", "must be AUTO or NONE, not \(text)")
            }
            appAssociation = parsed
        }
        return HostingSite(
            site: try members["site"].map { value throws(Error) in try name(value, at: "\(path).site") },
            target: try members["target"].map { value throws(Error) in try name(value, at: "\(path).target") },
            publicFolder: publicFolder,
            ignore: ignore,
            rewrites: try list(members["rewrites"], at: "\(path).rewrites", read: rewrite),
            redirects: try list(members["redirects"], at: "\(path).redirects", read: redirect),
            headers: try list(members["headers"], at: "\(path).headers", read: headerRule),
            cleanUrls: try members["cleanUrls"].map { value throws(Error) in try bool(value, at: "\(path).cleanUrls") } ?? false,
            trailingSlash: try members["trailingSlash"].map { value throws(Error) in try bool(value, at: "\(path).trailingSlash") },
            appAssociation: appAssociation)
    }

    // MARK: - Rules

    static func rewrite(_ value: HostingJSON, at path: String) throws(Error) -> HostingRewrite {
        let members = try object(value, at: path)
        try onlyKeys(members, ["source", "regex", "destination", "function", "run", "dynamicLinks"], at: path)
        let source = try source(members, at: path, options: [])
        let targets = ["destination", "function", "run", "dynamicLinks"].filter { members[$0] != nil }
        guard targets.count == 1 else {
            throw Error(
                targets.isEmpty ? .missingKey : .invalidValue, at: targets.isEmpty ? "\(path).destination" : path,
                targets.isEmpty ? "a rewrite needs a destination or a function" : "has \(targets.joined(separator: " and ")); a rewrite has one")
        }
        switch targets[0] {
        case "destination":
            var destination = try string(members["destination"]!, at: "\(path).destination")
            if !destination.hasPrefix("/") { destination = "/" + destination }
            guard !destination.split(separator: "/").contains("..") else {
                throw Error(.invalidValue, at: "\(path).destination", "must be a path inside the site, such as /index.html")
            }
            return HostingRewrite(source: source, target: .path(destination))
        case "function":
            return HostingRewrite(source: source, target: try function(members["function"]!, at: "\(path).function"))
        case "run":
            throw Error(.unsupported, at: "\(path).run", "rewrites to Cloud Run are not supported by Hearth; rewrite to a function")
        default:
            throw Error(.unsupported, at: "\(path).dynamicLinks", "Dynamic Links are not supported by Hearth")
        }
    }

    static func function(_ value: HostingJSON, at path: String) throws(Error) -> HostingRewrite.Target {
        func functionName(_ value: HostingJSON, at path: String) throws(Error) -> String {
            let name = try string(value, at: path)
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
                throw Error(.invalidValue, at: path, "\(name) is not a function name (letters, digits, - and _)")
            }
            return name
        }
        switch value {
        case .string:
            return .function(name: try functionName(value, at: path), region: nil)
        case .object(let members):
            try onlyKeys(members, ["functionId", "region", "pinTag"], at: path)
            guard let id = members["functionId"] else { throw Error(.missingKey, at: "\(path).functionId", "names no function") }
            if let pin = members["pinTag"] { _ = try bool(pin, at: "\(path).pinTag") }
            let region = try members["region"].map { value throws(Error) in try name(value, at: "\(path).region") }
            return .function(name: try functionName(id, at: "\(path).functionId"), region: region)
        default:
            throw Error(.wrongType, at: path, "must be a function name or {\"functionId\": …, \"region\": …}, not \(value.typeName)")
        }
    }

    static func redirect(_ value: HostingJSON, at path: String) throws(Error) -> HostingRedirect {
        let members = try object(value, at: path)
        try onlyKeys(members, ["source", "regex", "destination", "type"], at: path)
        let source = try source(members, at: path, options: [.captures])
        guard let destinationValue = members["destination"] else {
            throw Error(.missingKey, at: "\(path).destination", "a redirect needs a destination")
        }
        let destination = try string(destinationValue, at: "\(path).destination")
        guard !destination.isEmpty, !destination.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw Error(.invalidValue, at: "\(path).destination", "must be a path or URL on one line")
        }
        var status = 301
        if let type = members["type"] {
            guard case .number(let number) = type, let code = Int(exactly: number) else {
                throw Error(.wrongType, at: "\(path).type", "must be a status code number such as 301, not \(type.typeName)")
            }
            guard HostingRedirect.statuses.contains(code) else {
                throw Error(.invalidValue, at: "\(path).type", "must be 301, 302, 303, 307 or 308, not \(code)")
            }
            status = code
        }
        return HostingRedirect(source: source, destination: destination, status: status)
    }

    static func headerRule(_ value: HostingJSON, at path: String) throws(Error) -> HostingHeaderRule {
        let members = try object(value, at: path)
        try onlyKeys(members, ["source", "regex", "headers"], at: path)
        let source = try source(members, at: path, options: [])
        guard let list = members["headers"] else { throw Error(.missingKey, at: "\(path).headers", "lists no headers") }
        var headers: [HostingHeader] = []
        for (index, item) in try array(list, at: "\(path).headers").enumerated() {
            let itemPath = "\(path).headers[\(index)]"
            let header = try object(item, at: itemPath)
            try onlyKeys(header, ["key", "value"], at: itemPath)
            guard let key = header["key"] else { throw Error(.missingKey, at: "\(itemPath).key", "names no header") }
            guard let value = header["value"] else { throw Error(.missingKey, at: "\(itemPath).value", "gives no value") }
            let name = try string(key, at: "\(itemPath).key")
            let tokenCharacters = Set("!#$%&'*+-.^_`|~")
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || tokenCharacters.contains($0)) }) else {
                throw Error(.invalidValue, at: "\(itemPath).key", "\(name) is not a header name")
            }
            let text = try string(value, at: "\(itemPath).value")
            guard !text.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                throw Error(.invalidValue, at: "\(itemPath).value", "must be one line")
            }
            headers.append(HostingHeader(name: name, value: text))
        }
        return HostingHeaderRule(source: source, headers: headers)
    }

    /// A rule's `source` glob or `regex`: exactly one of them.
    static func source(_ members: [String: HostingJSON], at path: String, options: GlobPattern.Options) throws(Error) -> HostingSource {
        switch (members["source"], members["regex"]) {
        case (let glob?, nil):
            return .glob(try self.glob(try string(glob, at: "\(path).source"), options: options, at: "\(path).source"))
        case (nil, let regex?):
            let text = try string(regex, at: "\(path).regex")
            do {
                return .regex(try HostingRegex(text))
            } catch {
                throw Error(.invalidValue, at: "\(path).regex", error.message)
            }
        case (nil, nil):
            throw Error(.missingKey, at: "\(path).source", "needs a source glob or a regex")
        case (.some, .some):
            throw Error(.invalidValue, at: path, "has both source and regex; give one")
        }
    }

    // MARK: - Values

    static func glob(_ text: String, options: GlobPattern.Options, at path: String) throws(Error) -> GlobPattern {
        guard !text.isEmpty else { throw Error(.invalidValue, at: path, "is empty") }
        do {
            return try GlobPattern(text, options: options)
        } catch {
            throw Error(.invalidValue, at: path, error.message)
        }
    }

    static func list<Item>(
        _ value: HostingJSON?, at path: String, read: (HostingJSON, String) throws(Error) -> Item
    ) throws(Error) -> [Item] {
        guard let value else { return [] }
        var items: [Item] = []
        for (index, item) in try array(value, at: path).enumerated() { items.append(try read(item, "\(path)[\(index)]")) }
        return items
    }

    static func onlyKeys(_ members: [String: HostingJSON], _ known: Set<String>, at path: String) throws(Error) {
        for key in members.keys.sorted() where !known.contains(key) {
            throw Error(.unknownKey, at: "\(path).\(key)", "is not a setting here (expected \(known.sorted().joined(separator: ", ")))")
        }
    }

    static func object(_ value: HostingJSON, at path: String) throws(Error) -> [String: HostingJSON] {
        guard case .object(let members) = value else { throw Error(.wrongType, at: path, "must be an object, not \(value.typeName)") }
        return members
    }

    static func array(_ value: HostingJSON, at path: String) throws(Error) -> [HostingJSON] {
        guard case .array(let items) = value else { throw Error(.wrongType, at: path, "must be an array, not \(value.typeName)") }
        return items
    }

    static func string(_ value: HostingJSON, at path: String) throws(Error) -> String {
        guard case .string(let text) = value else { throw Error(.wrongType, at: path, "must be a string, not \(value.typeName)") }
        return text
    }

    static func bool(_ value: HostingJSON, at path: String) throws(Error) -> Bool {
        guard case .bool(let flag) = value else { throw Error(.wrongType, at: path, "must be true or false, not \(value.typeName)") }
        return flag
    }

    /// A site, target or region name: letters, digits, `-` and `_`.
    static func name(_ value: HostingJSON, at path: String) throws(Error) -> String {
        let text = try string(value, at: path)
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw Error(.invalidValue, at: path, "\(text) is not a name (letters, digits, - and _)")
        }
        return text
    }
}
