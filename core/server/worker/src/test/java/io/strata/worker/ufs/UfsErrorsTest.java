package io.strata.worker.ufs;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.StrataException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How under file system failures reach clients. A UFS that really refuses access cannot be had here (the tests run as
 * root, which every local permission lets through, and the HDFS of the integration tests runs without permissions),
 * so the refusals are the exception types the libraries throw, made as those libraries make them.
 */
class UfsErrorsTest {
  @TempDir
  Path tmp;

  private static ErrorCode codeOf(Throwable t) {
    StrataException e = UfsErrors.wrap("Reading x", t);
    assertThat(e.getMessage()).startsWith("Reading x failed: ");
    return e.code();
  }

  @Test
  void refusedAccess_isPermissionDenied_notARetriedUnavailable() {
    // HDFS (the NameNode's refusal, as the client unwraps it), S3A's is by name, NIO's, and the JDK's streams'.
    assertThat(codeOf(new org.apache.hadoop.security.AccessControlException(
        "Permission denied: user=bob, access=READ, inode=\"/a\":hdfs:supergroup:-rw-------")))
        .isEqualTo(ErrorCode.PERMISSION_DENIED);
    assertThat(codeOf(new java.nio.file.AccessDeniedException("/data/a"))).isEqualTo(ErrorCode.PERMISSION_DENIED);
    assertThat(codeOf(new FileNotFoundException("/data/a (Permission denied)")))
        .isEqualTo(ErrorCode.PERMISSION_DENIED);
    assertThat(UfsErrors.wrap("Reading x", new java.nio.file.AccessDeniedException("/data/a")))
        .hasMessageContaining("refused this worker access").hasMessageContaining("/data/a");
  }

  @Test
  void aMissingFile_isNotFound_andOtherIoFailures_unavailable() throws IOException {
    FileNotFoundException missing = null;
    try (var in = new java.io.FileInputStream(tmp.resolve("none").toFile())) {
      in.read();
    } catch (FileNotFoundException e) {
      missing = e; // "... (No such file or directory)", as the JDK words it
    }
    assertThat(codeOf(missing)).isEqualTo(ErrorCode.NOT_FOUND);
    assertThat(codeOf(new java.net.ConnectException("Connection refused"))).isEqualTo(ErrorCode.UNAVAILABLE);
  }
}
