package io.strata.worker.shortcircuit;

import java.io.FileInputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Path;

/**
 * Opens a block file read-only and names its descriptor number, which descriptor passing needs. The JDK
 * keeps the number private in {@link java.io.FileDescriptor}; it is read through {@code sun.misc.Unsafe}
 * (module jdk.unsupported, no JVM flags needed). Netty's own {@code FileDescriptor.from(path)} is NOT
 * usable: it opens for writing and truncates. Thread-safe (stateless).
 */
final class OpenFiles {
  private static final sun.misc.Unsafe UNSAFE;
  private static final long FD_OFFSET;
  private static final Throwable UNAVAILABLE;

  static {
    sun.misc.Unsafe unsafe = null;
    long offset = -1;
    Throwable failure = null;
    try {
      Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      unsafe = (sun.misc.Unsafe) f.get(null);
      offset = unsafe.objectFieldOffset(java.io.FileDescriptor.class.getDeclaredField("fd"));
    } catch (ReflectiveOperationException | RuntimeException e) {
      failure = e;
    }
    UNSAFE = unsafe;
    FD_OFFSET = offset;
    UNAVAILABLE = failure;
  }

  private OpenFiles() {}

  /** An open read-only file and its descriptor number; close it once the descriptor has been sent. */
  record Opened(FileInputStream stream, int fd) {}

  static Opened openReadOnly(Path path) throws IOException {
    if (UNAVAILABLE != null) {
      throw new IOException("Cannot name file descriptors in this JVM: " + UNAVAILABLE);
    }
    FileInputStream in = new FileInputStream(path.toFile());
    int fd = UNSAFE.getInt(in.getFD(), FD_OFFSET);
    if (fd < 0) {
      in.close();
      throw new IOException("The descriptor of " + path + " is not valid (" + fd + ")");
    }
    return new Opened(in, fd);
  }
}
