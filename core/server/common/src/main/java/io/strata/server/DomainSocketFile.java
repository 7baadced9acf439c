package io.strata.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The life of a Unix domain socket file a server listens on: made ready before the bind (its dir
 * created, a stale file from a server that died replaced), restricted after the bind to the server's
 * user and group (mode 0660), removed at stop. The caller must own the address the file is named after
 * (for a worker, its data port is already bound), so no live server uses a file this replaces.
 * Stateless; thread-safe.
 */
public final class DomainSocketFile {
  private static final Logger LOG = LoggerFactory.getLogger(DomainSocketFile.class);

  /** The socket file's mode: the server's user and group only. */
  public static final String MODE = "rw-rw----";

  private DomainSocketFile() {}

  /** Creates the socket's dir and removes a stale file at its path; call before binding. */
  public static void prepare(Path socket) throws IOException {
    Path parent = socket.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.deleteIfExists(socket);
  }

  /** Gives the bound socket file mode {@link #MODE}; fails naming the file when it cannot. */
  public static void restrict(Path socket, String what) throws IOException {
    try {
      Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString(MODE));
    } catch (IOException | UnsupportedOperationException e) {
      throw new IOException("Cannot restrict the " + what + " socket " + socket + " to its owner and group: "
          + e.getMessage(), e);
    }
  }

  /** Removes the socket file at stop (a failure is logged, not thrown). */
  public static void remove(Path socket, String what) {
    try {
      Files.deleteIfExists(socket);
    } catch (IOException e) {
      LOG.warn("Cannot remove the {} socket file {}: {}", what, socket, e.getMessage());
    }
  }
}
