package io.strata.cli;

import io.strata.client.ClientKeys;
import io.strata.client.FileSystem;
import io.strata.client.options.WriteType;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URI;
import java.util.Map;

/**
 * The {@code hadoop} path of {@code bench io}: the same files written and read through Hadoop's
 * {@code org.apache.hadoop.fs.FileSystem} API over {@code strata://host:port/} (the adapter
 * {@code io.strata.hadoop.StrataFileSystem}, found by Hadoop through its service file), so the figure
 * includes the adapter's own cost. The client settings of the path travel as {@code strata.*} keys of the
 * Hadoop {@code Configuration}, as a Hadoop program would set them.
 *
 * <p>Hadoop is reached by reflection: the CLI has no compile-time dependency on Hadoop or on the adapter
 * (the {@code strata fs} commands run without either). bin/strata's classpath (lib/) carries
 * hadoop-client-api, hadoop-client-runtime and strata-client-hdfs; where they are missing,
 * {@link #open} says so and the bench leaves the path out. Only the API's entry points and the
 * positioned read are called reflectively; the streams are plain {@link InputStream}/{@link OutputStream}.
 *
 * <p>Thread-safe as Hadoop's FileSystem is; each stream is for one thread.
 */
final class HadoopIoClient implements IoClient {
  private final Object hadoopFs;
  private final FileSystem strata;
  private final Constructor<?> pathOf;
  private final Method create;
  private final Method open;
  private final Method pread;
  private final Method close;

  private HadoopIoClient(Object hadoopFs, FileSystem strata, Constructor<?> pathOf, Method create, Method open,
      Method pread, Method close) {
    this.hadoopFs = hadoopFs;
    this.strata = strata;
    this.pathOf = pathOf;
    this.create = create;
    this.open = open;
    this.pread = pread;
    this.close = close;
  }

  /**
   * A new (uncached) Hadoop file system for the master {@code conf} names, with {@code conf}'s values as
   * its {@code strata.*} keys; throws {@link UnsupportedOperationException} saying why when Hadoop or the
   * adapter is not on the classpath.
   */
  static HadoopIoClient open(StrataConf conf, Map<String, String> hadoopKeys) throws IOException {
    ClassLoader loader = HadoopIoClient.class.getClassLoader();
    try {
      Class<?> confClass = Class.forName("org.apache.hadoop.conf.Configuration", true, loader);
      Class<?> fsClass = Class.forName("org.apache.hadoop.fs.FileSystem", true, loader);
      Class<?> pathClass = Class.forName("org.apache.hadoop.fs.Path", true, loader);
      Class.forName("io.strata.hadoop.StrataFileSystem", false, loader);
      Object hadoopConf = confClass.getConstructor().newInstance();
      Method set = confClass.getMethod("set", String.class, String.class);
      for (Map.Entry<String, String> e : conf.explicitValues().entrySet()) {
        set.invoke(hadoopConf, e.getKey(), e.getValue());
      }
      for (Map.Entry<String, String> e : hadoopKeys.entrySet()) {
        set.invoke(hadoopConf, e.getKey(), e.getValue());
      }
      // As the Strata API's files in the bench: MUST_CACHE, no background persist competing.
      set.invoke(hadoopConf, ClientKeys.WRITE_TYPE_DEFAULT.name(), WriteType.MUST_CACHE.name());
      Object fs = fsClass.getMethod("newInstance", URI.class, confClass).invoke(null, uri(conf), hadoopConf);
      Object client = fs.getClass().getMethod("client").invoke(fs);
      Method open = fsClass.getMethod("open", pathClass);
      Method pread = open.getReturnType().getMethod("readFully", long.class, byte[].class, int.class, int.class);
      return new HadoopIoClient(fs, (FileSystem) client, pathClass.getConstructor(String.class),
          fsClass.getMethod("create", pathClass, boolean.class, int.class, short.class, long.class), open, pread,
          fsClass.getMethod("close"));
    } catch (ClassNotFoundException | NoClassDefFoundError e) {
      throw new UnsupportedOperationException("Hadoop's FileSystem API or the strata:// adapter is not on the "
          + "classpath (" + e.getMessage() + "); bin/strata's lib/ has both");
    } catch (ReflectiveOperationException e) {
      throw unwrap(e);
    }
  }

  /** strata://host:port/ of the one master conf names, or strata:/// (the conf's masters or ZooKeeper). */
  static URI uri(StrataConf conf) {
    if (conf.isSet(CommonKeys.ZOOKEEPER_ADDRESS) || conf.isSet(CommonKeys.MASTER_RPC_ADDRESSES)) {
      return URI.create("strata:///");
    }
    return URI.create("strata://" + conf.get(CommonKeys.MASTER_HOSTNAME) + ":" + conf.get(CommonKeys.MASTER_RPC_PORT)
        + "/");
  }

  @Override
  public OutputStream create(String path, long blockSize) throws IOException {
    return (OutputStream) call(create, hadoopFs, path(path), true, 1 << 20, (short) 1, blockSize);
  }

  @Override
  public Input open(String path) throws IOException {
    InputStream in = (InputStream) call(open, hadoopFs, path(path));
    return IoClient.input(in, (pos, b, off, len) -> call(pread, in, pos, b, off, len));
  }

  @Override
  public FileSystem strata() {
    return strata;
  }

  /** Closes the Hadoop file system, which releases its (shared) Strata client. */
  @Override
  public void close() throws IOException {
    call(close, hadoopFs);
  }

  private Object path(String p) throws IOException {
    try {
      return pathOf.newInstance(p);
    } catch (ReflectiveOperationException e) {
      throw unwrap(e);
    }
  }

  private static Object call(Method m, Object target, Object... args) throws IOException {
    try {
      return m.invoke(target, args);
    } catch (ReflectiveOperationException e) {
      throw unwrap(e);
    }
  }

  /** The IOException (or unchecked failure) the Hadoop call threw. */
  private static IOException unwrap(ReflectiveOperationException e) {
    Throwable cause = e instanceof InvocationTargetException ? e.getCause() : e;
    if (cause instanceof IOException io) {
      return io;
    }
    if (cause instanceof RuntimeException r) {
      throw r;
    }
    if (cause instanceof Error err) {
      throw err;
    }
    return new IOException("Hadoop call failed: " + cause, cause);
  }
}
