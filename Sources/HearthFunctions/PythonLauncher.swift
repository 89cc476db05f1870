/// How Hearth starts a Python module for functions: through a few lines that give the process
/// default signal handling before it becomes the module.
///
/// A process started from the server inherits the signal mask of the thread that started it,
/// and the server's threads block nearly every signal (and ignore SIGTERM, which the service
/// lifecycle handles itself): without this, SIGTERM would never stop a function, and gunicorn's
/// master (under `functions-framework`) would never hear SIGCHLD when a worker dies, leaving it
/// without a worker until its timeout.
enum PythonLauncher {
    static let script = """
        import os, signal, sys
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD, signal.SIGUSR1, \
        signal.SIGUSR2, signal.SIGALRM, signal.SIGWINCH):
            signal.signal(number, signal.SIG_DFL)
        os.execv(sys.executable, [sys.executable, "-m"] + sys.argv[1:])
        """

    /// The interpreter's arguments to run `module` with `arguments`.
    static func arguments(module: String, _ arguments: [String] = []) -> [String] {
        ["-c", script, module] + arguments
    }
}
