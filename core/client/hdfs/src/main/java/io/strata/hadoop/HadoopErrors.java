package io.strata.hadoop;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.DirectoryNotEmptyException;
import io.strata.common.exception.InvalidPathException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.PermissionDeniedException;
import io.strata.common.exception.StrataException;
import java.io.FileNotFoundException;
import java.io.IOException;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;
import org.apache.hadoop.security.AccessControlException;

/**
 * The one place Strata's exceptions become the ones Hadoop users catch: NOT_FOUND is a
 * {@link FileNotFoundException}, ALREADY_EXISTS a {@link FileAlreadyExistsException}, DIRECTORY_NOT_EMPTY a
 * {@link PathIsNotEmptyDirectoryException}, PERMISSION_DENIED an {@link AccessControlException}, an
 * invalid path an {@link IllegalArgumentException} (as HDFS does); everything else stays the
 * {@link StrataException} it is (an {@link IOException}). The Strata exception is kept as the cause and its
 * message (which names the path) is kept. ParentNotDirectoryException needs a look at the namespace, so
 * {@code StrataFileSystem} makes it. Stateless.
 */
final class HadoopErrors {
  private HadoopErrors() {}

  static IOException translate(StrataException e) {
    IOException out;
    if (e instanceof NotFoundException) {
      out = new FileNotFoundException(e.getMessage());
    } else if (e instanceof AlreadyExistsException) {
      out = new FileAlreadyExistsException(e.getMessage());
    } else if (e instanceof DirectoryNotEmptyException) {
      out = new PathIsNotEmptyDirectoryException(e.getMessage());
    } else if (e instanceof PermissionDeniedException) {
      out = new AccessControlException(e.getMessage());
    } else if (e instanceof InvalidPathException) {
      throw new IllegalArgumentException(e.getMessage(), e);
    } else {
      return e;
    }
    out.initCause(e);
    return out;
  }

  /** {@link #translate} for any I/O error: only Strata's are changed. */
  static IOException translate(IOException e) {
    return e instanceof StrataException ? translate((StrataException) e) : e;
  }
}
