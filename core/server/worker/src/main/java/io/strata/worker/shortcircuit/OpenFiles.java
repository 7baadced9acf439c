package io.strata.worker.shortcircuit;

import java.io.FileInputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Path;

/**
 * Opens a block file (read-only, or a temp block for writing) and names its descriptor number, which descriptor passing needs. The JDK
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

  /** An open file and its descriptor number; close it once the descriptor has been sent. */
  record Opened(java.io.Closeable file, int fd) {}

  static Opened openReadOnly(Path path) throws IOException {
    checkAvailable();
    FileInputStream in = new FileInputStream(path.toFile());
    return named(in, in.getFD(), path);
  }

  /**
   * Opens an existing temp block file for reading and writing (never truncating it). RandomAccessFile
   * creates a file that is gone, so the caller checks afterwards that its temp block is still live.
   */
  static Opened openForWrite(Path path) throws IOException {
    checkAvailable();
    if (!java.nio.file.Files.isRegularFile(path)) {
      throw new java.nio.file.NoSuchFileException(path.toString());
    }
    java.io.RandomAccessFile f = new java.io.RandomAccessFile(path.toFile(), "rw");
    return named(f, f.getFD(), path);
  }

  private static void checkAvailable() throws IOException {
    if (UNAVAILABLE != null) {
      throw new IOException("Cannot name file descriptors in this JVM: " + UNAVAILABLE);
    }
  }

  private static Opened named(java.io.Closeable file, java.io.FileDescriptor fdObject, Path path) throws IOException {
    int fd = UNSAFE.getInt(fdObject, FD_OFFSET);
    if (fd < 0) {
      file.close();
      throw new IOException("The descriptor of " + path + " is not valid (" + fd + ")");
    }
    return new Opened(file, fd);
  }
}
