package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.ClientKeys;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.PropertyKey;
import io.strata.common.conf.StrataConf;
import io.strata.master.MasterKeys;
import io.strata.server.ServerKeys;
import io.strata.worker.WorkerKeys;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** conf/strata-site.properties.template documents every declared key, and every default parses. */
class ConfigTemplateTest {
  static List<PropertyKey<?>> allKeys() throws IllegalAccessException {
    List<PropertyKey<?>> keys = new ArrayList<>();
    for (Class<?> c : List.of(CommonKeys.class, ServerKeys.class, MasterKeys.class, WorkerKeys.class,
        ClientKeys.class)) {
      for (Field f : c.getFields()) {
        if (Modifier.isStatic(f.getModifiers()) && f.getType() == PropertyKey.class) {
          keys.add((PropertyKey<?>) f.get(null));
        }
      }
    }
    return keys;
  }

  @Test
  void templateDocumentsEveryKey() throws Exception {
    Path root = Path.of("").toAbsolutePath();
    while (!Files.exists(root.resolve("conf"))) {
      root = root.getParent();
    }
    String template = Files.readString(root.resolve("conf/strata-site.properties.template"));
    List<PropertyKey<?>> keys = allKeys();
    assertThat(keys).hasSizeGreaterThan(15);
    for (PropertyKey<?> k : keys) {
      assertThat(template).as("template mentions " + k.name()).contains("# " + k.name() + "=");
    }
  }

  @Test
  void everyDefaultParses() throws Exception {
    StrataConf conf = StrataConf.defaults();
    for (PropertyKey<?> k : allKeys()) {
      assertThat(k.doc()).as("doc of " + k.name()).isNotEmpty();
      if (k.defaultValue() != null) {
        assertThat(conf.get(k)).as(k.name()).isNotNull();
      }
    }
  }

  @Test
  void keyNamesAreUniqueAndDotted() throws Exception {
    List<String> names = new ArrayList<>();
    for (PropertyKey<?> k : allKeys()) {
      assertThat(k.name()).matches("strata(\\.[a-z0-9]+)+");
      names.add(k.name());
    }
    assertThat(names).doesNotHaveDuplicates();
  }
}
