/// The social web app and the data console: plain HTML, CSS and ES modules with no build step,
/// in this target's `Resources` folder (`Web/` at the top of the repository points there).
///
/// The EmbedResources plugin compiles every file of the folder into this module, so a program
/// linking it (the `hearth` binary) carries the app and needs no files beside it: copied alone
/// to a server, it still serves the app and the console. `hearth serve --web-root Web` serves
/// the folder itself instead, so edits show without a rebuild.
public enum HearthWeb {
    /// Every file of the web folder by its path inside it (`index.html`, `app/main.js`),
    /// with its bytes. Each call makes the table anew: keep it.
    public static func files() -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for path in EmbeddedResources.paths {
            files[path] = EmbeddedResources.contents(of: path)
        }
        return files
    }
}
