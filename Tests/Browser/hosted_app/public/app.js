// Friendly Chat: sign up with email, then post to the room named by the path (/rooms/<room>,
// served index.html by the rewrite) and see the room's messages live, pictures too (kept in
// Cloud Storage, as FriendlyChat keeps them). Namespaced SDK 8 API.
'use strict';

var room = (location.pathname.match(/^\/rooms\/([\w-]+)$/) || [])[1] || 'lobby';
document.getElementById('room').textContent = room;
var messagesRef = firebase.database().ref('messages/' + room);

function showError(error) {
  document.getElementById('error').textContent = error.code + ': ' + error.message;
}

document.getElementById('sign-up').addEventListener('submit', function(event) {
  event.preventDefault();
  firebase.auth().createUserWithEmailAndPassword(
    document.getElementById('email').value, document.getElementById('password').value
  ).catch(showError);
});

document.getElementById('message-form').addEventListener('submit', function(event) {
  event.preventDefault();
  var input = document.getElementById('message');
  var user = firebase.auth().currentUser;
  messagesRef.push({
    uid: user.uid,
    name: user.email,
    text: input.value,
    timestamp: firebase.database.ServerValue.TIMESTAMP
  }).then(function() { input.value = ''; }).catch(showError);
});

document.getElementById('image').addEventListener('change', function(event) {
  var file = event.target.files[0];
  var user = firebase.auth().currentUser;
  var messageRef = messagesRef.push();
  var imageRef = firebase.storage().ref(user.uid + '/' + messageRef.key + '/' + file.name);
  imageRef.put(file, { contentType: file.type }).then(function() {
    return imageRef.getDownloadURL();
  }).then(function(imageUrl) {
    return messageRef.set({
      uid: user.uid,
      name: user.email,
      text: file.name,
      imageUrl: imageUrl,
      timestamp: firebase.database.ServerValue.TIMESTAMP
    });
  }).then(function() { event.target.value = ''; }).catch(showError);
});

var listening = false;
firebase.auth().onAuthStateChanged(function(user) {
  document.getElementById('sign-up').hidden = !!user;
  document.getElementById('signed-in').hidden = !user;
  if (!user || listening) return;
  listening = true;
  document.getElementById('user-email').textContent = user.email;
  messagesRef.limitToLast(50).on('child_added', function(snapshot) {
    var message = snapshot.val();
    var item = document.createElement('li');
    item.className = 'message';
    item.dataset.key = snapshot.key;
    item.textContent = message.name + ': ' + message.text;
    if (message.imageUrl) {
      var image = document.createElement('img');
      image.src = message.imageUrl;
      image.alt = message.text;
      item.appendChild(image);
    }
    document.getElementById('messages').appendChild(item);
  }, showError);
});
