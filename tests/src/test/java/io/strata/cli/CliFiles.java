package io.strata.cli;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Random;

/** File contents and file I/O shared by the CLI integration tests. Stateless. */
final class CliFiles {
  private CliFiles() {}

  /** Deterministic content: {@code length} bytes from a seeded generator. */
  static byte[] data(long seed, int length) {
    byte[] b = new byte[length];
    new Random(seed).nextBytes(b);
    return b;
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      b.writeBytes(p);
    }
    return b.toByteArray();
  }

  /** Writes a complete Strata file through the client (not the CLI). */
  static void write(FileSystem fs, String path, byte[] content) throws IOException {
    try (FileOutStream o = fs.createFile(path, CreateFileOptions.defaults())) {
      o.write(content);
    }
  }

  /** Reads a whole Strata file through the client (not the CLI). */
  static byte[] read(FileSystem fs, String path) throws IOException {
    try (FileInStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }
}
