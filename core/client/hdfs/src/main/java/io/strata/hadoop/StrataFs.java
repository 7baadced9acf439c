package io.strata.hadoop;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.DelegateToFileSystem;

/**
 * The {@link org.apache.hadoop.fs.AbstractFileSystem} for scheme {@code strata}, so that
 * {@link org.apache.hadoop.fs.FileContext} works: every call goes to a {@link StrataFileSystem}. Hadoop finds
 * an AbstractFileSystem only through a configuration key, never a service file, so a program that uses
 * FileContext sets {@code fs.AbstractFileSystem.strata.impl=io.strata.hadoop.StrataFs} (docs/HADOOP.md).
 * Thread-safe, as the file system under it.
 */
public class StrataFs extends DelegateToFileSystem {
  /** The constructor Hadoop calls (by reflection) for {@code fs.AbstractFileSystem.strata.impl}. */
  public StrataFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
    super(uri, new StrataFileSystem(), conf, StrataFileSystem.SCHEME, false);
  }

  @Override
  public int getUriDefaultPort() {
    return -1; // an authority without a port means the configured port, not a fixed default
  }
}
